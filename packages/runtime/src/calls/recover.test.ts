import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Manifest } from "@toolpact/contract";
import type { ActivityEvent, Principal } from "../api.js";
import type { ToolpactRuntime } from "../runtime.js";
import { ALLOW_ALL, NOTES, TENANT, createFixture, rejection, tool, type RuntimeFixture } from "../testing/fixtures.js";

const RECOVER = "com.example.payments";
const manifest: Manifest = {
  id: RECOVER,
  version: "1.0.0",
  permissions: ["tools:provide"],
  tools: [
    tool({ name: "charge", effect: "external", recovery: "idempotent", requiresConfirmation: false, timeoutMs: 10_000 }),
    tool({ name: "ship", effect: "write", recovery: "none", requiresConfirmation: false, timeoutMs: 10_000 }),
    tool({ name: "refund", effect: "external", recovery: "none", requiresConfirmation: false }),
  ],
  gates: [],
  hooks: [],
  guards: [],
};
const charge = { providerId: RECOVER, tool: "charge" };
const ship = { providerId: RECOVER, tool: "ship" };

interface Invocation {
  readonly tool: string;
  readonly operationId: string;
  readonly instance: string;
  readonly input: unknown;
}

let fx: RuntimeFixture;
let alice: Principal;
let invocations: Invocation[];
/** How many of the next invocations hang until `releaseAll`. */
let hangNext: number;
let releases: (() => void)[];
let clockAhead: number;

/** Registers the payments provider on a runtime; every instance logs into the same list. */
function loadPayments(runtime: ToolpactRuntime, instance: string): void {
  runtime.registerPlugin(manifest);
  const sdk = runtime.sdkFor(RECOVER);
  for (const name of ["charge", "ship", "refund"]) {
    sdk.tools.provide(name, {
      execute: async (input: unknown, ctx) => {
        invocations.push({ tool: name, operationId: ctx.operationId, instance, input });
        if (hangNext > 0) {
          hangNext--;
          await new Promise<void>((resolve) => releases.push(resolve));
        }
        return { charged: true };
      },
    });
  }
}

/** Another instance on the same database whose clock runs `aheadMs` later: the first one's leases look expired to it. */
async function peer(name: string, aheadMs: number): Promise<ToolpactRuntime> {
  const runtime = await fx.reopen({ clock: () => fx.now() + aheadMs, recoveryIntervalMs: 0, instanceId: name });
  loadPayments(runtime, name);
  return runtime;
}

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function recoveryEvents(): Promise<readonly ActivityEvent[]> {
  return (await fx.runtime.admin.listActivity(TENANT, { limit: 1000 })).events.filter((event) => event.kind === "recovery");
}

function sealedInputOf(operationId: string): unknown {
  const db = new Database(fx.dbPath, { readonly: true });
  const row = db.prepare("SELECT sealed_input FROM operations WHERE operation_id = ?").get(operationId) as { sealed_input: unknown };
  db.close();
  return row.sealed_input;
}

beforeEach(async () => {
  invocations = [];
  hangNext = 0;
  releases = [];
  clockAhead = 60_000;
  fx = await createFixture({ runtime: { leaseMs: 1000, recoveryIntervalMs: 0, instanceId: "instance-a" } });
  loadPayments(fx.runtime, "instance-a");
  await fx.runtime.admin.installPlugin(TENANT, RECOVER);
  alice = await fx.principal();
});
afterEach(async () => {
  for (const release of releases) release();
  await fx.dispose();
});

/** Starts a call on instance A whose provider hangs (A "crashes" from the store's point of view). */
async function stuckCall(ref: typeof charge, options: { idempotencyKey?: string } = {}): Promise<{ operationId: string; outcome: Promise<unknown> }> {
  hangNext = 1;
  const outcome = fx.runtime.execute(alice, ref, { title: "order-7" }, options).then(
    (value) => value,
    (error: unknown) => error,
  );
  await waitFor(() => invocations.length === 1);
  return { operationId: invocations[0]!.operationId, outcome };
}

describe("the pinned recovery policy", () => {
  it("is rejected when a rule would re-invoke a tool declaring recovery none, listing every mismatch", async () => {
    const error = await rejection(
      fx.runtime.admin.setRecoveryPolicy(TENANT, {
        rules: [
          { tools: `${RECOVER}:*`, retry: "reinvoke" },
          { tools: `${NOTES}:create-record`, retry: "reinvoke", maxAttempts: 2 },
          { tools: `${RECOVER}:charge`, retry: "reinvoke" },
          { tools: "*", retry: "none" },
        ],
      }),
    );
    expect(error.code).toBe("INPUT_INVALID");
    const issues = error.data.issues as { path: string; message: string }[];
    expect(issues.map((issue) => [issue.path, issue.message.match(/re-invoke (\S+),/)?.[1]])).toEqual([
      ["/rules/0/tools", `${RECOVER}:ship@1`],
      ["/rules/0/tools", `${RECOVER}:refund@1`],
      ["/rules/1/tools", `${NOTES}:create-record@1`],
      ["/rules/1/tools", `${NOTES}:create-record@2`],
    ]);
    for (const name of [`${RECOVER}:ship@1`, `${RECOVER}:refund@1`, `${NOTES}:create-record@1`, `${NOTES}:create-record@2`]) {
      expect(error.message).toContain(name);
    }
    expect(error.message).not.toContain(`${RECOVER}:charge@1,`);
  });

  it("is accepted within the declared capability, and logged as a policy change", async () => {
    const before = (await fx.runtime.admin.listActivity(TENANT, { limit: 1000 })).events.filter((e) => e.kind === "policy").length;
    await fx.runtime.admin.setRecoveryPolicy(TENANT, { rules: [{ tools: `${RECOVER}:charge`, retry: "reinvoke", maxAttempts: 2 }] });
    const after = (await fx.runtime.admin.listActivity(TENANT, { limit: 1000 })).events.filter((e) => e.kind === "policy").length;
    expect(after).toBe(before + 1);
    expect((await rejection(fx.runtime.admin.setRecoveryPolicy(TENANT, { rules: [{ tools: "*", retry: "sometimes" as "none" }] }))).code).toBe("INPUT_INVALID");
  });
});

describe("settling expired leases", () => {
  it("a recovery:none tool becomes unknown, is never invoked again, and the activity log says so", async () => {
    const stuck = await stuckCall(ship);
    const b = await peer("instance-b", clockAhead);
    expect(await b.settleExpiredLeases()).toBe(1);
    expect(await b.settleExpiredLeases()).toBe(0);
    expect(await fx.runtime.getOperation(alice, stuck.operationId)).toMatchObject({ state: "unknown", errorCode: "OUTCOME_UNKNOWN" });
    expect(invocations).toHaveLength(1);
    expect((await recoveryEvents())[0]).toMatchObject({
      phase: "settle",
      outcome: "unknown",
      operationId: stuck.operationId,
      tool: `${RECOVER}:ship@1`,
      actorUserId: "alice",
    });
    // the first instance's late answer cannot overwrite the settlement: its caller hears OUTCOME_UNKNOWN
    releases.shift()!();
    expect(await stuck.outcome).toMatchObject({ code: "OUTCOME_UNKNOWN", data: { operationId: stuck.operationId } });
    expect((await fx.runtime.getOperation(alice, stuck.operationId)).state).toBe("unknown");
  });

  it("an idempotent tool without a reinvoke rule becomes unknown too", async () => {
    const stuck = await stuckCall(charge);
    const b = await peer("instance-b", clockAhead);
    expect(await b.settleExpiredLeases()).toBe(1);
    expect((await fx.runtime.getOperation(alice, stuck.operationId)).state).toBe("unknown");
    expect(invocations).toHaveLength(1);
    expect(sealedInputOf(stuck.operationId)).toBeNull();
  });

  it("an idempotent tool with a reinvoke rule is invoked exactly once more, with the same operation id", async () => {
    await fx.runtime.admin.setRecoveryPolicy(TENANT, { rules: [{ tools: `${RECOVER}:charge`, retry: "reinvoke" }] });
    const stuck = await stuckCall(charge, { idempotencyKey: "order-7" });
    expect(sealedInputOf(stuck.operationId)).toBeInstanceOf(Buffer);
    // two instances race to settle it: one takes the lease
    const [b, c] = await Promise.all([peer("instance-b", clockAhead), peer("instance-c", clockAhead)]);
    const settled = await Promise.all([b.settleExpiredLeases(), c.settleExpiredLeases()]);
    expect(settled.reduce((sum, n) => sum + n, 0)).toBe(1);
    expect(invocations).toHaveLength(2);
    expect(invocations[1]).toMatchObject({ tool: "charge", operationId: stuck.operationId, input: { title: "order-7" } });
    expect(invocations[1]!.instance).not.toBe("instance-a");
    expect(await fx.runtime.getOperation(alice, stuck.operationId)).toMatchObject({ state: "succeeded" });
    expect(sealedInputOf(stuck.operationId)).toBeNull();
    expect((await recoveryEvents())[0]).toMatchObject({ phase: "settle", outcome: "succeeded", operationId: stuck.operationId });

    // a replay with the key answers the recovered result; nothing runs a third time
    expect(await b.execute(alice, charge, { title: "order-7" }, { idempotencyKey: "order-7" })).toEqual({
      operationId: stuck.operationId,
      result: { charged: true },
    });
    releases.shift()!();
    expect(await stuck.outcome).toMatchObject({ code: "OUTCOME_UNKNOWN" });
    expect(await b.settleExpiredLeases()).toBe(0);
    expect(invocations).toHaveLength(2);
  });

  it("runs the authorization steps again before re-invoking: a call no longer permitted becomes unknown", async () => {
    await fx.runtime.admin.setRecoveryPolicy(TENANT, { rules: [{ tools: `${RECOVER}:charge`, retry: "reinvoke" }] });
    const stuck = await stuckCall(charge);
    await fx.runtime.admin.setPolicy(TENANT, {
      ...ALLOW_ALL,
      rules: [
        { tools: "*", decision: "allow" },
        { tools: `${RECOVER}:*`, decision: "deny" },
      ],
    });
    const b = await peer("instance-b", clockAhead);
    expect(await b.settleExpiredLeases()).toBe(1);
    expect(invocations).toHaveLength(1);
    expect((await fx.runtime.getOperation(alice, stuck.operationId)).state).toBe("unknown");
    expect((await recoveryEvents())[0]).toMatchObject({ outcome: "unknown", errorCode: "PERMISSION_DENIED", operationId: stuck.operationId });
  });

  it("re-invokes at most maxAttempts times: a re-invocation that is lost too ends unknown", async () => {
    await fx.runtime.admin.setRecoveryPolicy(TENANT, { rules: [{ tools: `${RECOVER}:charge`, retry: "reinvoke" }] });
    const stuck = await stuckCall(charge);
    const b = await peer("instance-b", clockAhead);
    hangNext = 1;
    const bPass = b.settleExpiredLeases();
    await waitFor(() => invocations.length === 2);
    // B "crashes" during the re-invocation; C, later still, finds B's lease expired
    const c = await peer("instance-c", clockAhead * 3);
    expect(await c.settleExpiredLeases()).toBe(1);
    expect(invocations).toHaveLength(2);
    expect((await fx.runtime.getOperation(alice, stuck.operationId)).state).toBe("unknown");
    for (const release of releases.splice(0)) release();
    await bPass;
    expect((await fx.runtime.getOperation(alice, stuck.operationId)).state).toBe("unknown");
  });

  it("settles other expired leases while one re-invocation is slow, each still exactly once", async () => {
    await fx.runtime.admin.setRecoveryPolicy(TENANT, { rules: [{ tools: `${RECOVER}:charge`, retry: "reinvoke" }] });
    // three calls whose instance "crashes": their providers hang, their leases run out
    hangNext = 3;
    const stuck = [0, 1, 2].map((n) => fx.runtime.execute(alice, charge, { title: `order-${n}` }).catch((error: unknown) => error));
    await waitFor(() => invocations.length === 3);
    const b = await peer("instance-b", clockAhead);
    // the first re-invocation hangs too; the other two must not wait for it
    hangNext = 1;
    const pass = b.settleExpiredLeases();
    await waitFor(() => invocations.length === 6);
    const slow = invocations[3]!.operationId;
    const rest = invocations
      .slice(0, 3)
      .map((invocation) => invocation.operationId)
      .filter((id) => id !== slow);
    expect(rest).toHaveLength(2);
    const states = async () => Promise.all(rest.map(async (id) => (await fx.runtime.getOperation(alice, id)).state));
    for (const deadline = Date.now() + 5000; (await states()).some((state) => state === "running") && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(await states()).toEqual(["succeeded", "succeeded"]);
    expect((await fx.runtime.getOperation(alice, slow)).state).toBe("running");
    // a second pass on the same instance while the first runs leaves the slow one to it
    expect(await b.settleExpiredLeases()).toBe(0);
    expect(invocations).toHaveLength(6);
    for (const release of releases.splice(0)) release();
    expect(await pass).toBe(3);
    expect((await fx.runtime.getOperation(alice, slow)).state).toBe("succeeded");
    expect(
      invocations
        .slice(3)
        .map((invocation) => invocation.operationId)
        .sort(),
    ).toEqual(
      invocations
        .slice(0, 3)
        .map((invocation) => invocation.operationId)
        .sort(),
    );
    await Promise.all(stuck);
  });

  it("runs periodically on its own", async () => {
    const stuck = await stuckCall(ship);
    const runtime = await fx.reopen({ clock: () => fx.now() + clockAhead, recoveryIntervalMs: 25, instanceId: "instance-d" });
    loadPayments(runtime, "instance-d");
    const deadline = Date.now() + 5000;
    while ((await fx.runtime.getOperation(alice, stuck.operationId)).state === "running" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await fx.runtime.getOperation(alice, stuck.operationId)).state).toBe("unknown");
  });

  it("waits at start-up for the handler it would re-invoke instead of settling without it", async () => {
    await fx.runtime.admin.setRecoveryPolicy(TENANT, { rules: [{ tools: `${RECOVER}:charge`, retry: "reinvoke" }] });
    const stuck = await stuckCall(charge);
    const starting = await fx.reopen({ clock: () => fx.now() + clockAhead, recoveryIntervalMs: 0, instanceId: "instance-f" });
    starting.registerPlugin(manifest);
    expect(await starting.settleExpiredLeases()).toBe(0);
    expect((await fx.runtime.getOperation(alice, stuck.operationId)).state).toBe("running");
    starting.sdkFor(RECOVER).tools.provide("charge", {
      execute: (_input: unknown, ctx) => {
        invocations.push({ tool: "charge", operationId: ctx.operationId, instance: "instance-f", input: _input });
        return { charged: true };
      },
    });
    expect(await starting.settleExpiredLeases()).toBe(1);
    expect(invocations.map((i) => [i.instance, i.operationId])).toEqual([
      ["instance-a", stuck.operationId],
      ["instance-f", stuck.operationId],
    ]);
  });

  it("leaves operations of plugins this instance does not load alone", async () => {
    const stuck = await stuckCall(ship);
    const stranger = await fx.reopen({ clock: () => fx.now() + clockAhead, recoveryIntervalMs: 0, instanceId: "instance-e" });
    expect(await stranger.settleExpiredLeases()).toBe(0);
    expect((await fx.runtime.getOperation(alice, stuck.operationId)).state).toBe("running");
  });
});
