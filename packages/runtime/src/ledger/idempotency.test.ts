import { describe, expect, it } from "vitest";
import type { Principal } from "../api.js";
import { ASSISTANT, NOTES, TENANT, eachTestFixtureWithAlice, rejection, type RuntimeFixture } from "../testing/fixtures.js";

const search = { providerId: NOTES, tool: "search-records" };
const create = { providerId: NOTES, tool: "create-record", version: 1 };
const explode = { providerId: NOTES, tool: "explode" };

let fx: RuntimeFixture;
let alice: Principal;
eachTestFixtureWithAlice((made) => ({ fx, alice } = made));

describe("idempotency keys", () => {
  it("runs once per key and input, and replays the recorded result", async () => {
    const first = await fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "k-1" });
    const again = await fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "k-1" });
    expect(again).toEqual(first);
    expect(fx.handlers.executed).toHaveLength(1);
    const replayed = (await fx.runtime.admin.listActivity(TENANT)).events[0];
    expect(replayed).toMatchObject({ outcome: "succeeded", operationId: first.operationId });
  });

  it("replays before checking the confirmation: the token is not needed, nor burnt, the second time", async () => {
    const preview = await fx.runtime.preview(alice, create, { title: "t" });
    const token = (preview.confirmation as { token: string }).token;
    const first = await fx.runtime.execute(alice, create, { title: "t" }, { confirmationToken: token, idempotencyKey: "k" });
    await expect(fx.runtime.execute(alice, create, { title: "t" }, { idempotencyKey: "k" })).resolves.toEqual(first);
    expect(fx.handlers.executed).toHaveLength(1);
  });

  it("refuses the same key with another input", async () => {
    await fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "k-1" });
    const error = await rejection(fx.runtime.execute(alice, search, { query: "y" }, { idempotencyKey: "k-1" }));
    expect(error.code).toBe("IDEMPOTENCY_CONFLICT");
    expect(fx.handlers.executed).toHaveLength(1);
  });

  it("matches the input regardless of key order", async () => {
    const create2 = { providerId: NOTES, tool: "create-record", version: 2 };
    const t1 = await fx.runtime.preview(alice, create2, { title: "t", tags: ["a"] });
    const first = await fx.runtime.execute(
      alice,
      create2,
      { title: "t", tags: ["a"] },
      {
        confirmationToken: (t1.confirmation as { token: string }).token,
        idempotencyKey: "k",
      },
    );
    await expect(fx.runtime.execute(alice, create2, { tags: ["a"], title: "t" }, { idempotencyKey: "k" })).resolves.toEqual(first);
  });

  it("keeps keys apart per actor, caller and tool", async () => {
    const bob = await fx.principal(ASSISTANT, { sub: "bob" });
    const notes = await fx.principal(NOTES);
    await fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "shared" });
    await fx.runtime.execute(bob, search, { query: "other" }, { idempotencyKey: "shared" });
    await fx.runtime.execute(notes, search, { query: "third" }, { idempotencyKey: "shared" });
    await fx.runtime.execute(alice, { providerId: NOTES, tool: "verified-read" }, { title: "x" }, { idempotencyKey: "shared" }).catch(() => undefined);
    expect(fx.handlers.executed.map((call) => call.input)).toEqual([{ query: "x" }, { query: "other" }, { query: "third" }]);
  });

  it("answers OPERATION_IN_PROGRESS while the first call with the key still runs", async () => {
    const held = { providerId: NOTES, tool: "hold-read" };
    const first = fx.runtime.execute(alice, held, { title: "x" }, { idempotencyKey: "k" });
    while (fx.handlers.executed.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    const second = await rejection(fx.runtime.execute(alice, held, { title: "x" }, { idempotencyKey: "k" }));
    expect(second.code).toBe("OPERATION_IN_PROGRESS");
    fx.handlers.release!();
    const done = await first;
    expect(second.data.operationId).toBe(done.operationId);
    await expect(fx.runtime.execute(alice, held, { title: "x" }, { idempotencyKey: "k" })).resolves.toEqual(done);
    expect(fx.handlers.executed).toHaveLength(1);
  });

  it("runs once when many calls with one key race", async () => {
    const results = await Promise.allSettled(Array.from({ length: 30 }, () => fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "race" })));
    expect(fx.handlers.executed).toHaveLength(1);
    const codes = results.map((r) => (r.status === "fulfilled" ? "ok" : (r.reason as { code: string }).code));
    expect(codes.every((code) => code === "ok" || code === "OPERATION_IN_PROGRESS")).toBe(true);
  });

  it("replays a recorded failure as the same error, without running again", async () => {
    const first = await rejection(fx.runtime.execute(alice, explode, { title: "x" }, { idempotencyKey: "k" }));
    const again = await rejection(fx.runtime.execute(alice, explode, { title: "x" }, { idempotencyKey: "k" }));
    expect(first.code).toBe("PROVIDER_FAILED");
    expect(again.code).toBe("PROVIDER_FAILED");
    expect(again.data.operationId).toBe(first.data.operationId);
    expect(fx.handlers.executed).toHaveLength(1);
  });

  it("still replays after a restart, and forgets the key after 24 h", async () => {
    const first = await fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "k" });
    await fx.runtime.close();
    const restarted = await fx.reopen();
    await expect(restarted.execute(alice, search, { query: "x" }, { idempotencyKey: "k" })).resolves.toEqual(first);
    fx.advance(24 * 3600_000 + 1);
    const fresh = await restarted.execute(alice, search, { query: "x" }, { idempotencyKey: "k" });
    expect(fresh.operationId).not.toBe(first.operationId);
    expect(fx.handlers.executed).toHaveLength(2);
  });

  it("re-checks authorization before replaying", async () => {
    await fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "k" });
    await fx.runtime.admin.setPolicy(TENANT, { rules: [] });
    expect((await rejection(fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "k" }))).code).toBe("PERMISSION_DENIED");
  });

  it("refuses an empty or oversized key", async () => {
    expect((await rejection(fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "" }))).code).toBe("INPUT_INVALID");
    expect((await rejection(fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "k".repeat(257) }))).code).toBe("INPUT_INVALID");
  });
});
