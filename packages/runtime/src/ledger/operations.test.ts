import { describe, expect, it } from "vitest";
import type { Principal } from "../api.js";
import {
  ALLOW_ALL,
  ASSISTANT,
  NOTES,
  OTHER_TENANT,
  TENANT,
  callerManifest,
  configureTenant,
  eachTestFixtureWithAlice,
  rejection,
  tool,
  type RuntimeFixture,
} from "../testing/fixtures.js";

const search = { providerId: NOTES, tool: "search-records" };
const create = { providerId: NOTES, tool: "create-record", version: 1 };

let fx: RuntimeFixture;
let alice: Principal;
eachTestFixtureWithAlice((made) => ({ fx, alice } = made));

async function confirmed(ref: { providerId: string; tool: string; version?: number }, input: unknown) {
  const preview = await fx.runtime.preview(alice, ref, input);
  return { confirmationToken: (preview.confirmation as { token: string }).token };
}

describe("provider failures", () => {
  it("answers PROVIDER_FAILED with the error class and without the provider's message, and records it", async () => {
    const error = await rejection(fx.runtime.execute(alice, { providerId: NOTES, tool: "explode" }, { title: "secret-title" }));
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(error.message).not.toContain("secret-title");
    expect(error.message).not.toContain("cannot store");
    expect(error.data).toMatchObject({ errorClass: "ProviderDatabaseError", operationId: expect.any(String) });
    expect(JSON.stringify(error.data)).not.toContain("secret-title");

    const operation = await fx.runtime.getOperation(alice, error.data.operationId as string);
    expect(operation).toMatchObject({ state: "failed", errorCode: "PROVIDER_FAILED" });
    const [event] = (await fx.runtime.admin.listActivity(TENANT)).events;
    expect(event).toMatchObject({
      outcome: "failed",
      errorCode: "PROVIDER_FAILED",
      errorClass: "ProviderDatabaseError",
      operationId: error.data.operationId,
    });
  });

  it("settles a timed-out write as unknown (OUTCOME_UNKNOWN) and aborts the provider's signal", async () => {
    const input = { title: "x" };
    const error = await rejection(
      fx.runtime.execute(alice, { providerId: NOTES, tool: "slow-write" }, input, await confirmed({ providerId: NOTES, tool: "slow-write" }, input)),
    );
    expect(error.code).toBe("OUTCOME_UNKNOWN");
    const operationId = error.data.operationId as string;
    expect(operationId).toEqual(expect.any(String));
    expect((await fx.runtime.getOperation(alice, operationId)).state).toBe("unknown");
    const signal = fx.handlers.executed[0]!.ctx.signal as AbortSignal;
    expect(signal.aborted).toBe(true);
    const [event] = (await fx.runtime.admin.listActivity(TENANT)).events;
    expect(event).toMatchObject({ outcome: "unknown", errorCode: "OUTCOME_UNKNOWN", errorClass: "TimeoutError", operationId });
  });

  it("settles a timed-out read as failed", async () => {
    const error = await rejection(fx.runtime.execute(alice, { providerId: NOTES, tool: "slow-read" }, { title: "x" }));
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(error.data.errorClass).toBe("TimeoutError");
    expect((await fx.runtime.getOperation(alice, error.data.operationId as string)).state).toBe("failed");
  });

  it("withholds a result that breaks outputSchema; the operation succeeded and the error names it", async () => {
    const error = await rejection(fx.runtime.execute(alice, { providerId: NOTES, tool: "bad-output" }, { title: "x" }));
    expect(error.code).toBe("OUTPUT_INVALID");
    const operation = await fx.runtime.getOperation(alice, error.data.operationId as string);
    expect(operation).toMatchObject({ state: "succeeded", errorCode: "OUTPUT_INVALID" });
    expect(JSON.stringify({ ...error, data: { ...error.data, operationId: undefined } })).not.toContain("42");
  });

  it("settles the operation even when the result is hostile (throwing getters, cycles)", async () => {
    fx.runtime.registerPlugin(
      callerManifest("com.example.hostile", {
        permissions: ["tools:provide"],
        tools: [tool({ name: "trap", effect: "read", inputSchema: { type: "object" } })],
      }),
    );
    let mode = "getter";
    fx.runtime.sdkFor("com.example.hostile").tools.provide("trap", {
      execute: () => {
        if (mode === "getter") {
          return {
            get targetId(): string {
              throw new Error("boom");
            },
          };
        }
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        return cyclic;
      },
    });
    await fx.runtime.admin.installPlugin(TENANT, "com.example.hostile");
    const trap = { providerId: "com.example.hostile", tool: "trap" };
    const first = await rejection(fx.runtime.execute(alice, trap, {}));
    expect(first.code).toBe("OUTPUT_INVALID");
    expect((await fx.runtime.getOperation(alice, first.data.operationId as string)).state).toBe("succeeded");
    mode = "cycle";
    const second = await rejection(fx.runtime.execute(alice, trap, {}, { idempotencyKey: "k" }));
    expect(second.code).toBe("OUTPUT_INVALID");
    expect((await fx.runtime.getOperation(alice, second.data.operationId as string)).state).toBe("succeeded");
  });

  it("answers OUTCOME_UNKNOWN, never failed, when the commit fails after the effect ran", async () => {
    const input = { title: "x" };
    const options = await confirmed({ providerId: NOTES, tool: "slow-write" }, input);
    const pending = rejection(
      fx.runtime.execute(alice, { providerId: NOTES, tool: "slow-write" }, input, options).catch((error) => {
        throw error;
      }),
    );
    // Wait until the provider runs (the operation exists), then take the database away before it answers.
    while (fx.handlers.executed.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    await fx.store.close();
    fx.handlers.release!();
    const error = await pending;
    expect(error.code).toBe("OUTCOME_UNKNOWN");
    expect(error.data.operationId).toEqual(expect.any(String));
    expect(fx.logs.some((entry) => entry.event === "commit_failed")).toBe(true);
  });
});

describe("operations", () => {
  it("are readable only by the tenant, caller and actor that started them", async () => {
    const { operationId } = await fx.runtime.execute(alice, search, { query: "x" });
    await expect(fx.runtime.getOperation(alice, operationId)).resolves.toMatchObject({ state: "succeeded" });

    const bob = await fx.principal(ASSISTANT, { sub: "bob" });
    const notesCaller = await fx.principal(NOTES);
    await configureTenant(fx.runtime, OTHER_TENANT, ALLOW_ALL);
    const foreignTenant = await fx.principal(ASSISTANT, { tid: OTHER_TENANT });
    const strangers = [bob, notesCaller, foreignTenant];
    const messages = new Set<string>();
    for (const stranger of strangers) {
      const error = await rejection(fx.runtime.getOperation(stranger, operationId));
      expect(error.code).toBe("PERMISSION_DENIED");
      messages.add(error.message.replace(operationId, "<id>"));
    }
    const missing = await rejection(fx.runtime.getOperation(alice, "0190aaaa-0000-7000-8000-000000000000"));
    expect(missing.code).toBe("PERMISSION_DENIED");
    messages.add(missing.message.replace("0190aaaa-0000-7000-8000-000000000000", "<id>"));
    expect(messages.size).toBe(1);
  });

  it("carry the operation id to the provider before it runs", async () => {
    const input = { title: "x" };
    const answer = await fx.runtime.execute(alice, create, input, await confirmed(create, input));
    expect(fx.handlers.executed[0]!.ctx.operationId).toBe(answer.operationId);
  });
});

describe("activity reads", () => {
  it("shows a user their own events only, page by page; the admin sees the whole tenant", async () => {
    const bob = await fx.principal(ASSISTANT, { sub: "bob" });
    for (let i = 0; i < 5; i++) await fx.runtime.execute(alice, search, { query: `a${i}` });
    await fx.runtime.execute(bob, search, { query: "b" });

    const first = await fx.runtime.listActivity(alice, { limit: 2 });
    expect(first.events).toHaveLength(2);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await fx.runtime.listActivity(alice, { limit: 2, cursor: first.nextCursor! });
    const third = await fx.runtime.listActivity(alice, { limit: 2, cursor: second.nextCursor! });
    const all = [...first.events, ...second.events, ...third.events];
    expect(all).toHaveLength(5);
    expect(third.nextCursor).toBeUndefined();
    expect(all.every((event) => event.actorUserId === "alice")).toBe(true);
    expect(new Set(all.map((event) => event.id)).size).toBe(5);
    expect(all.map((e) => e.at)).toEqual([...all.map((e) => e.at)].sort().reverse());

    const bobs = await fx.runtime.listActivity(bob);
    expect(bobs.events.map((event) => event.actorUserId)).toEqual(["bob"]);
    const tenantWide = await fx.runtime.admin.listActivity(TENANT, { limit: 1000 });
    expect(tenantWide.events.filter((event) => event.kind === "call")).toHaveLength(6);

    await configureTenant(fx.runtime, OTHER_TENANT, ALLOW_ALL);
    const foreign = await fx.principal(ASSISTANT, { tid: OTHER_TENANT });
    expect((await fx.runtime.listActivity(foreign)).events).toEqual([]);
    expect((await rejection(fx.runtime.listActivity(alice, { cursor: "forged" }))).code).toBe("INPUT_INVALID");
    expect((await rejection(fx.runtime.listActivity(alice, { limit: 0 }))).code).toBe("INPUT_INVALID");
  });
});

describe("lifecycle", () => {
  it("drains in-flight calls on close, then refuses new ones", async () => {
    const input = { title: "x" };
    const options = await confirmed({ providerId: NOTES, tool: "slow-write" }, input);
    const reopened = await fx.reopen({ drainTimeoutMs: 5_000 });
    const pending = reopened.execute(alice, { providerId: NOTES, tool: "slow-write" }, input, options).catch((error: unknown) => error);
    while (fx.handlers.executed.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(reopened.metrics.inFlight).toBe(1);
    const closing = reopened.close();
    expect(await reopened.ready()).toBe(false);
    expect((await rejection(reopened.execute(alice, search, { query: "x" }))).code).toBe("SHUTTING_DOWN");
    await closing;
    expect(await pending).toMatchObject({ code: "OUTCOME_UNKNOWN" });
    expect(reopened.metrics.inFlight).toBe(0);
  });

  it("is ready while the store answers", async () => {
    expect(await fx.runtime.ready()).toBe(true);
  });

  it("prunes what retention allows", async () => {
    await fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "k" });
    const reopened = await fx.reopen({ retention: { activityDays: 1 } });
    fx.advance(2 * 24 * 3600_000);
    const result = await reopened.prune();
    expect(result.idempotencyRecords).toBe(1);
    expect(result.activityEvents).toBeGreaterThan(0);
    expect((await reopened.admin.listActivity(TENANT)).events).toEqual([]);
  });

  it("prunes settled operations past retention.operationDays, never a running one, and refuses a retention shorter than idempotency keys", async () => {
    const done = await fx.runtime.execute(alice, search, { query: "x" });
    const held = { providerId: NOTES, tool: "hold-read" };
    const running = fx.runtime.execute(alice, held, { title: "x" }, { idempotencyKey: "held" });
    while (fx.handlers.executed.length < 2) await new Promise((resolve) => setTimeout(resolve, 1));
    const reopened = await fx.reopen({ retention: { operationDays: 2 } });
    fx.advance(3 * 24 * 3600_000);
    const result = await reopened.prune();
    expect(result.operations).toBe(1);
    expect((await rejection(reopened.getOperation(alice, done.operationId))).code).toBe("PERMISSION_DENIED");
    fx.handlers.release!();
    const heldDone = await running;
    expect(await reopened.getOperation(alice, heldDone.operationId)).toMatchObject({ state: "succeeded" });
    await expect(fx.reopen({ retention: { operationDays: 0.5 } })).rejects.toThrow(/operationDays/);
  });
});
