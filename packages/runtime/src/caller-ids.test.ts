/**
 * Ids a caller hands back are checked for shape before any store query: a NUL (which PostgreSQL refuses
 * in text, as a store failure) or other junk is INPUT_INVALID naming the field, and the store never sees it.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRecordingStore } from "./testing/recording-store.js";
import { NOTES, createFixture, rejection, type RuntimeFixture } from "./testing/fixtures.js";

const recording = createRecordingStore();
let fx: RuntimeFixture;
beforeEach(async () => {
  fx = await createFixture({ wrapStore: (store) => recording.wrap(store) });
});
afterEach(() => fx.dispose());

const JUNK = ["0190aaaa-0000-7000-8000-00000000000\u0000", "", "a b", "../etc/passwd", "x".repeat(129), "\u202Eabc", "id\r\nx"];

describe("ids a caller supplies", () => {
  it("are INPUT_INVALID naming the field, and never reach the store", async () => {
    const alice = await fx.principal();
    const person = { tenantId: alice.tenantId, userId: alice.actor.userId };
    const search = { providerId: NOTES, tool: "search-records" };
    const calls: [string, (id: string) => Promise<unknown>][] = [
      ["operationId", (id) => fx.runtime.getOperation(alice, id)],
      ["requestId", (id) => fx.runtime.getConfirmation(alice, id)],
      ["requestId", (id) => fx.runtime.waitConfirmation(alice, id, { timeoutMs: 0 })],
      ["requestId", (id) => fx.runtime.cancelConfirmation(alice, id)],
      ["requestId", (id) => fx.runtime.describeConfirmation(person, id)],
      ["requestId", (id) => fx.runtime.decideConfirmation(person, id, "approve")],
      ["runId", (id) => fx.runtime.closeRun(alice, id)],
      ["runId", (id) => fx.runtime.preview(alice, search, { query: "x" }, { runId: id })],
      ["runId", (id) => fx.runtime.execute(alice, search, { query: "x" }, { runId: id })],
      ["idempotencyKey", (id) => fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: id })],
    ];
    for (const [field, call] of calls) {
      for (const id of JUNK) {
        if (field === "idempotencyKey" && id === "x".repeat(129)) continue; // a valid key (up to 256)
        if (field === "idempotencyKey" && id === "../etc/passwd") continue; // visible ASCII: a valid key
        recording.clear();
        const error = await rejection(call(id));
        expect(error, `${field} ${JSON.stringify(id)}`).toMatchObject({ code: "INPUT_INVALID", data: { issues: [{ path: `/${field}` }] } });
        expect(error.message).toContain(`${field} is malformed`);
        expect(recording.lines(), `${field} ${JSON.stringify(id)}`).toEqual([]);
      }
    }
    expect(fx.logs.filter((entry) => entry.level === "error")).toEqual([]);
  });

  it("of the right shape still reach the store and get its answer", async () => {
    const alice = await fx.principal();
    expect((await rejection(fx.runtime.getOperation(alice, "0190aaaa-0000-7000-8000-000000000000"))).code).toBe("PERMISSION_DENIED");
    expect((await rejection(fx.runtime.getConfirmation(alice, "no-such-request"))).code).toBe("PERMISSION_DENIED");
    const search = { providerId: NOTES, tool: "search-records" };
    expect((await rejection(fx.runtime.execute(alice, search, { query: "x" }, { runId: "made-up" }))).code).toBe("RUN_DENIED");
    await expect(fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "order-42:retry/1" })).resolves.toBeDefined();
  });
});
