import Database from "better-sqlite3";
import { beforeEach, describe, expect, it } from "vitest";
import { ToolpactError, type GateDeclaration, type GuardDeclaration, type HookDeclaration, type Manifest } from "@toolpact/contract";
import type { ActivityEvent, Principal } from "./api.js";
import type { GateCall, GateDecision, GuardDecision, HookCall, SeamContext, StagedReaction } from "./seams.js";
import type { PluginSdk } from "./plugin-sdk.js";
import { ALLOW_ALL, NOTES, TENANT, eachTestFixtureWithAlice, rejection, type RuntimeFixture } from "./testing/fixtures.js";

const GATES = "com.example.gates";
const MORE_GATES = "com.example.moregates";
const HOOKS = "com.example.hooks";
const GUARDS = "com.example.guards";

const search = { providerId: NOTES, tool: "search-records" };
const create = { providerId: NOTES, tool: "create-record", version: 1 };
const bad = { providerId: NOTES, tool: "bad-output" };

function seamPlugin(
  id: string,
  seams: { gates?: GateDeclaration[]; hooks?: HookDeclaration[]; guards?: GuardDeclaration[] },
): Manifest {
  const permissions: Manifest["permissions"][number][] = [];
  if (seams.gates !== undefined) permissions.push("tools:gate");
  if (seams.hooks !== undefined) permissions.push("tools:observe");
  if (seams.guards !== undefined) permissions.push("tools:guard");
  return { id, version: "1.0.0", permissions, tools: [], gates: seams.gates ?? [], hooks: seams.hooks ?? [], guards: seams.guards ?? [] };
}

let fx: RuntimeFixture;
let alice: Principal;
eachTestFixtureWithAlice((made) => ({ fx, alice } = made));

/** Registers, installs and activates a seam plugin; returns its SDK. */
async function addPlugin(manifest: Manifest, activate = true): Promise<PluginSdk> {
  fx.runtime.registerPlugin(manifest);
  await fx.runtime.admin.installPlugin(TENANT, manifest.id);
  if (activate) {
    await fx.runtime.admin.setActivation(TENANT, manifest.id, {
      gates: manifest.gates.map((g) => g.name),
      hooks: manifest.hooks.map((h) => h.name),
      guards: manifest.guards.map((g) => g.name),
    });
  }
  return fx.runtime.sdkFor(manifest.id);
}

async function events(kind?: ActivityEvent["kind"]): Promise<readonly ActivityEvent[]> {
  const all = (await fx.runtime.admin.listActivity(TENANT, { limit: 1000 })).events;
  return kind === undefined ? all : all.filter((event) => event.kind === kind);
}

const gate = (name: string, appliesTo = ["*"], timeoutMs?: number): GateDeclaration =>
  timeoutMs === undefined ? { name, appliesTo } : { name, appliesTo, timeoutMs };
const never = () => new Promise<never>(() => undefined);

describe("registration is capability-bound", () => {
  it("refuses an undeclared gate, hook or guard, a second function, and a non-function", async () => {
    const sdk = await addPlugin(
      seamPlugin(GATES, { gates: [gate("hours")], hooks: [{ name: "notify", point: "afterTool", appliesTo: ["*"] }] }),
      false,
    );
    expect(() => sdk.gates.provide("other", () => ({ decision: "allow" }))).toThrow(
      expect.objectContaining({ code: "CAPABILITY_UNDECLARED", message: expect.stringContaining('declares "hours"') }),
    );
    expect(() => sdk.guards.provide("hours", () => ({ decision: "pass" }))).toThrow(expect.objectContaining({ code: "CAPABILITY_UNDECLARED" }));
    expect(() => sdk.hooks.provide("hours", () => [])).toThrow(expect.objectContaining({ code: "CAPABILITY_UNDECLARED" }));
    expect(() => sdk.gates.provide("hours", "allow" as never)).toThrow(expect.objectContaining({ code: "CAPABILITY_UNDECLARED" }));
    sdk.gates.provide("hours", () => ({ decision: "allow" }));
    expect(() => sdk.gates.provide("hours", () => ({ decision: "block", reason: "x" }))).toThrow(
      expect.objectContaining({ code: "CAPABILITY_UNDECLARED", message: expect.stringContaining("provided once") }),
    );
    // another plugin's SDK cannot provide this plugin's gate
    expect(() => fx.runtime.sdkFor(NOTES).gates.provide("hours", () => ({ decision: "allow" }))).toThrow(
      expect.objectContaining({ code: "CAPABILITY_UNDECLARED" }),
    );
  });

  it("refuses a manifest declaring seams without their permission", () => {
    const manifest = { ...seamPlugin(GATES, { gates: [gate("hours")] }), permissions: [] };
    expect(() => fx.runtime.registerPlugin(manifest)).toThrow(expect.objectContaining({ code: "MANIFEST_INVALID" }));
  });

  it("activates only declared names, listing every undeclared one", async () => {
    await addPlugin(seamPlugin(GATES, { gates: [gate("hours")] }), false);
    const error = await rejection(
      fx.runtime.admin.setActivation(TENANT, GATES, { gates: ["hours", "nope"], hooks: ["ghost"], guards: ["phantom"] }),
    );
    expect(error.code).toBe("CAPABILITY_UNDECLARED");
    expect(error.message).toContain('gate "nope"');
    expect(error.message).toContain('hook "ghost"');
    expect(error.message).toContain('guard "phantom"');
    expect(error.message).not.toContain('"hours"');
    expect((await rejection(fx.runtime.admin.setActivation(TENANT, "com.example.unknown", {}))).code).toBe("PROVIDER_NOT_FOUND");
  });
});

describe("gates", () => {
  it("act only where the tenant activated them, and an activation change logs a policy event", async () => {
    const seen: GateCall[] = [];
    const sdk = await addPlugin(seamPlugin(GATES, { gates: [gate("hours")] }), false);
    sdk.gates.provide("hours", (call) => {
      seen.push(call);
      return { decision: "block", reason: "outside business hours" };
    });
    await expect(fx.runtime.execute(alice, search, { query: "x" })).resolves.toBeDefined();
    expect(seen).toHaveLength(0);

    const before = (await events("policy")).length;
    await fx.runtime.admin.setActivation(TENANT, GATES, { gates: ["hours"] });
    expect((await events("policy")).length).toBe(before + 1);
    const error = await rejection(fx.runtime.execute(alice, search, { query: "x" }));
    expect(error).toMatchObject({ code: "GATE_BLOCKED", message: expect.stringContaining("outside business hours") });
    expect(seen[0]).toMatchObject({ tool: `${NOTES}:search-records@1`, phase: "execute", input: { query: "x" }, callerPluginId: alice.callerPluginId });
    expect(seen[0]?.actor.userId).toBe("alice");
    expect(Object.isFrozen(seen[0])).toBe(true);
    expect(fx.handlers.executed).toHaveLength(1);
    expect((await events("call"))[0]).toMatchObject({ outcome: "denied", errorCode: "GATE_BLOCKED", seam: `${GATES}:hours` });

    // deactivating (an empty activation replaces the previous one) lets calls through again
    await fx.runtime.admin.setActivation(TENANT, GATES, {});
    await expect(fx.runtime.execute(alice, search, { query: "x" })).resolves.toBeDefined();
  });

  it("act only within appliesTo, narrowed further by policy, and not for a disabled plugin", async () => {
    let calls = 0;
    const sdk = await addPlugin(seamPlugin(GATES, { gates: [gate("reads", [`${NOTES}:search-*`, `${NOTES}:verified-read`])] }));
    sdk.gates.provide("reads", () => {
      calls++;
      return { decision: "block", reason: "no" };
    });
    expect((await rejection(fx.runtime.execute(alice, search, { query: "x" }))).code).toBe("GATE_BLOCKED");
    await expect(fx.runtime.execute(alice, { providerId: NOTES, tool: "guarded-read" }, { title: "x" })).resolves.toBeDefined();
    expect(calls).toBe(1);

    // policy narrows appliesTo to the intersection: only verified-read stays gated
    await fx.runtime.admin.setPolicy(TENANT, { ...ALLOW_ALL, narrow: { [`${GATES}:reads`]: [`${NOTES}:verified-read`, `${NOTES}:guarded-read`] } });
    await expect(fx.runtime.execute(alice, search, { query: "x" })).resolves.toBeDefined();
    // guarded-read is in the narrowing but not in the declared appliesTo: narrowing never widens
    await expect(fx.runtime.execute(alice, { providerId: NOTES, tool: "guarded-read" }, { title: "x" })).resolves.toBeDefined();
    const verified = await fx.principal(undefined, { lvl: 3 });
    expect((await rejection(fx.runtime.execute(verified, { providerId: NOTES, tool: "verified-read" }, { title: "x" }))).code).toBe(
      "GATE_BLOCKED",
    );
    expect(calls).toBe(2);

    await fx.runtime.admin.setPolicy(TENANT, ALLOW_ALL);
    await fx.runtime.admin.setPluginEnabled(TENANT, GATES, false);
    await expect(fx.runtime.execute(alice, search, { query: "x" })).resolves.toBeDefined();
    expect(calls).toBe(2);
  });

  it("cannot widen a denial: a denied call never reaches the gates, whatever they answer", async () => {
    let calls = 0;
    const sdk = await addPlugin(seamPlugin(GATES, { gates: [gate("yes")] }));
    sdk.gates.provide("yes", () => {
      calls++;
      return { decision: "result", value: { hits: ["forged"] } };
    });
    await fx.runtime.admin.setPolicy(TENANT, {
      rules: [
        { tools: "*", decision: "allow" },
        { tools: `${NOTES}:search-records`, decision: "deny" },
      ],
    });
    expect((await rejection(fx.runtime.execute(alice, search, { query: "x" }))).code).toBe("PERMISSION_DENIED");
    expect((await rejection(fx.runtime.preview(alice, search, { query: "x" }))).code).toBe("PERMISSION_DENIED");
    // nor does a provider's authorize refusal reach them
    fx.handlers.authorizeAnswer = false;
    expect((await rejection(fx.runtime.execute(alice, { providerId: NOTES, tool: "guarded-read" }, { title: "x" }))).code).toBe(
      "PERMISSION_DENIED",
    );
    expect(calls).toBe(0);
  });

  it("blocks when a gate throws, hangs past its timeout, answers nonsense, or has no function", async () => {
    const sdk = await addPlugin(
      seamPlugin(GATES, { gates: [gate("throws", [`${NOTES}:search-records`]), gate("hangs", [`${NOTES}:guarded-read`], 50)] }),
    );
    class GateDatabaseError extends Error {}
    sdk.gates.provide("throws", () => {
      throw new GateDatabaseError("secret internals");
    });
    let aborted = false;
    sdk.gates.provide("hangs", (_call, ctx) => {
      ctx.signal.addEventListener("abort", () => {
        aborted = true;
      });
      return never();
    });
    const thrown = await rejection(fx.runtime.execute(alice, search, { query: "x" }));
    expect(thrown).toMatchObject({ code: "GATE_BLOCKED", data: { errorClass: "GateDatabaseError" } });
    expect(thrown.message).not.toContain("secret internals");
    const started = performance.now();
    const hung = await rejection(fx.runtime.execute(alice, { providerId: NOTES, tool: "guarded-read" }, { title: "x" }));
    expect(performance.now() - started).toBeLessThan(1500);
    expect(hung).toMatchObject({ code: "GATE_BLOCKED", data: { errorClass: "TimeoutError" } });
    expect(aborted).toBe(true);
    expect(fx.handlers.executed).toHaveLength(0);
    const blocks = (await events("call")).filter((e) => e.errorCode === "GATE_BLOCKED");
    expect(blocks.map((e) => [e.seam, e.errorClass])).toEqual([
      [`${GATES}:hangs`, "TimeoutError"],
      [`${GATES}:throws`, "GateDatabaseError"],
    ]);

    const silent = await addPlugin(seamPlugin(MORE_GATES, { gates: [gate("unprovided"), gate("nonsense")] }));
    silent.gates.provide("nonsense", () => ({ decision: "maybe" }) as unknown as GateDecision);
    const missing = await rejection(fx.runtime.execute(alice, { providerId: NOTES, tool: "explode" }, { title: "x" }));
    expect(missing).toMatchObject({ code: "GATE_BLOCKED", data: { errorClass: "HandlerMissing" } });
    expect(missing.message).toContain("fail closed");
  });

  it("most restrictive wins, in declared order: block > requireConfirmation > result > allow", async () => {
    const order: string[] = [];
    const answers: Record<string, GateDecision> = {
      first: { decision: "allow" },
      second: { decision: "allow" },
      third: { decision: "allow" },
    };
    const first = await addPlugin(seamPlugin(GATES, { gates: [gate("first"), gate("second")] }));
    const second = await addPlugin(seamPlugin(MORE_GATES, { gates: [gate("third")] }));
    for (const [sdk, name] of [[first, "first"], [first, "second"], [second, "third"]] as const) {
      sdk.gates.provide(name, () => {
        order.push(name);
        return answers[name]!;
      });
    }
    await expect(fx.runtime.execute(alice, search, { query: "x" })).resolves.toMatchObject({ result: { hits: ["x"] } });
    expect(order).toEqual(["first", "second", "third"]);

    // result: the provider is not invoked, the value is the answer (and goes through outputSchema)
    answers.second = { decision: "result", value: { hits: ["from the gate"] } };
    const executedBefore = fx.handlers.executed.length;
    const answered = await fx.runtime.execute(alice, search, { query: "x" });
    expect(answered.result).toEqual({ hits: ["from the gate"] });
    expect(fx.handlers.executed.length).toBe(executedBefore);
    expect((await fx.runtime.getOperation(alice, answered.operationId)).state).toBe("succeeded");
    expect((await events("call"))[0]).toMatchObject({ outcome: "succeeded", seam: `${GATES}:second` });

    // requireConfirmation beats result: a read tool now needs a confirmation
    answers.third = { decision: "requireConfirmation", reason: "unusual" };
    expect((await rejection(fx.runtime.execute(alice, search, { query: "x" }))).code).toBe("CONFIRMATION_REQUIRED");
    const preview = await fx.runtime.preview(alice, search, { query: "x" });
    expect(preview.confirmation).toMatchObject({ required: true, mode: "token" });
    const token = (preview.confirmation as { token: string }).token;
    await expect(fx.runtime.execute(alice, search, { query: "x" }, { confirmationToken: token })).resolves.toMatchObject({
      result: { hits: ["x"] },
    });

    // block beats everything, and stops at the blocking gate
    answers.first = { decision: "block", reason: "closed" };
    order.length = 0;
    expect((await rejection(fx.runtime.execute(alice, search, { query: "x" }))).message).toContain("closed");
    expect(order).toEqual(["first"]);
  });

  it("checks a gate's result against outputSchema", async () => {
    const sdk = await addPlugin(seamPlugin(GATES, { gates: [gate("answer", [`${NOTES}:bad-output`])] }));
    sdk.gates.provide("answer", () => ({ decision: "result", value: { id: 7 } }));
    const error = await rejection(fx.runtime.execute(alice, bad, { title: "x" }));
    expect(error.code).toBe("OUTPUT_INVALID");
    expect(error.data.operationId).toEqual(expect.any(String));
    expect(fx.handlers.executed).toHaveLength(0);
  });

  it("gives a gate the caller methods of its plugin for the call's actor", async () => {
    const manifest = { ...seamPlugin(GATES, { gates: [gate("peek", [`${NOTES}:create-record`])] }), permissions: ["tools:gate", "tools:call"] as Manifest["permissions"] };
    const sdk = await addPlugin(manifest);
    let hits: unknown;
    sdk.gates.provide("peek", async (_call, ctx: SeamContext) => {
      expect(ctx.actor.userId).toBe("alice");
      hits = (await sdk.tools.execute(search, { query: "inside" })).result;
      return { decision: "allow" };
    });
    await fx.runtime.preview(alice, create, { title: "x" });
    expect(hits).toEqual({ hits: ["inside"] });
  });
});

describe("guards", () => {
  const guard = (name: string, timeoutMs?: number): GuardDeclaration =>
    timeoutMs === undefined ? { name, appliesTo: [`${NOTES}:create-record@1`] } : { name, appliesTo: [`${NOTES}:create-record@1`], timeoutMs };
  let answer: GuardDecision | (() => unknown);
  let token: () => Promise<string>;

  beforeEach(async () => {
    const sdk = await addPlugin(seamPlugin(GUARDS, { guards: [guard("redact", 50)] }));
    answer = { decision: "pass" };
    sdk.guards.provide("redact", () => (typeof answer === "function" ? answer() : answer) as GuardDecision);
    token = async () => {
      const preview = await fx.runtime.preview(alice, create, { title: "x" });
      return (preview.confirmation as { token: string }).token;
    };
  });

  const run = async (options: { idempotencyKey?: string } = {}) =>
    fx.runtime.execute(alice, create, { title: "x" }, { confirmationToken: await token(), ...options });

  it("pass the output, or replace it with a valid replacement", async () => {
    expect((await run()).result).toEqual({ id: "rec-1", targetId: "rec-1" });
    answer = { decision: "replace", output: { id: "redacted" } };
    expect((await run()).result).toEqual({ id: "redacted" });
  });

  it("answer OUTPUT_INVALID with the operation id for a replacement outputSchema refuses", async () => {
    answer = { decision: "replace", output: { id: 42 } };
    const error = await rejection(run());
    expect(error.code).toBe("OUTPUT_INVALID");
    const operationId = error.data.operationId as string;
    expect((await fx.runtime.getOperation(alice, operationId)).state).toBe("succeeded");
  });

  it("withhold: GUARD_REJECTED with the operation id; the operation succeeded; a replay is withheld again", async () => {
    answer = { decision: "withhold", reason: "contains an email address" };
    const error = await rejection(run({ idempotencyKey: "k1" }));
    expect(error.code).toBe("GUARD_REJECTED");
    const operationId = error.data.operationId as string;
    expect(operationId).toEqual(expect.any(String));
    expect((await fx.runtime.getOperation(alice, operationId)).state).toBe("succeeded");
    expect(fx.handlers.executed).toHaveLength(1);
    expect((await events("call"))[0]).toMatchObject({ errorCode: "GUARD_REJECTED", seam: `${GUARDS}:redact`, operationId });

    // the guard would now pass, but what it withheld was never kept: the replay is withheld again, nothing runs twice
    answer = { decision: "pass" };
    const replay = await rejection(run({ idempotencyKey: "k1" }));
    expect(replay).toMatchObject({ code: "GUARD_REJECTED", data: { operationId } });
    expect(fx.handlers.executed).toHaveLength(1);
    const db = new Database(fx.dbPath, { readonly: true });
    const row = db.prepare("SELECT state, error_code, sealed_result FROM idempotency_keys").get() as Record<string, unknown>;
    db.close();
    expect(row).toEqual({ state: "succeeded", error_code: "GUARD_REJECTED", sealed_result: null });
  });

  it("fail closed: a guard that throws, hangs or answers nonsense withholds", async () => {
    answer = () => {
      throw new RangeError("boom");
    };
    expect(await rejection(run())).toMatchObject({ code: "GUARD_REJECTED", data: { errorClass: "RangeError" } });
    answer = () => never();
    const started = performance.now();
    expect(await rejection(run())).toMatchObject({ code: "GUARD_REJECTED", data: { errorClass: "TimeoutError" } });
    expect(performance.now() - started).toBeLessThan(1500);
    answer = () => ({ decision: "replace" });
    expect(await rejection(run())).toMatchObject({ code: "GUARD_REJECTED", data: { errorClass: "InvalidGuardDecision" } });
    answer = () => undefined;
    expect((await rejection(run())).code).toBe("GUARD_REJECTED");
  });

  it("cannot change the output in place: it is frozen, so the attempt fails the guard (fail closed)", async () => {
    answer = () => ({ decision: "pass" });
    const sdk = await addPlugin(seamPlugin("com.example.sneaky", { guards: [guard("mutate")] }));
    let frozen: boolean | undefined;
    sdk.guards.provide("mutate", (call) => {
      frozen = Object.isFrozen(call.output);
      (call.output as { id: unknown }).id = 99;
      return { decision: "pass" };
    });
    expect(await rejection(run())).toMatchObject({ code: "GUARD_REJECTED", data: { errorClass: "TypeError", operationId: expect.any(String) } });
    expect(frozen).toBe(true);
  });
});

describe("AfterTool hooks", () => {
  const hook = (name: string, timeoutMs = 100): HookDeclaration => ({ name, point: "afterTool", appliesTo: [`${NOTES}:*`], timeoutMs });

  it("stage reactions committed with the operation into the outbox, sealed, claimed and acknowledged", async () => {
    const seen: HookCall[] = [];
    const sdk = await addPlugin(seamPlugin(HOOKS, { hooks: [hook("notify")] }));
    sdk.hooks.provide("notify", (call): StagedReaction[] => {
      seen.push(call);
      return [
        { kind: "notify-owner", payload: { operationId: call.operationId, secret: "owner@example.com" } },
        { kind: "audit", payload: null },
      ];
    });
    const answer = await fx.runtime.execute(alice, search, { query: "plans" });
    expect(seen[0]).toMatchObject({ outcome: "succeeded", output: { hits: ["plans"] }, operationId: answer.operationId, input: { query: "plans" } });

    const db = new Database(fx.dbPath, { readonly: true });
    const raw = db.prepare("SELECT kind, sealed_payload FROM outbox").all() as { kind: string; sealed_payload: Buffer }[];
    db.close();
    expect(raw.map((row) => row.kind)).toEqual(["notify-owner", "audit"]);
    expect(raw[0]!.sealed_payload.toString("latin1")).not.toContain("owner@example.com");

    const claimed = await fx.runtime.admin.claimOutbox(TENANT, { limit: 10, leaseSeconds: 30 });
    expect(claimed.map((item) => [item.kind, item.payload, item.hook, item.operationId, item.attempts])).toEqual([
      ["notify-owner", { operationId: answer.operationId, secret: "owner@example.com" }, `${HOOKS}:notify`, answer.operationId, 1],
      ["audit", null, `${HOOKS}:notify`, answer.operationId, 1],
    ]);
    expect(await fx.runtime.admin.claimOutbox(TENANT, { limit: 10, leaseSeconds: 30 })).toEqual([]);
    await fx.runtime.admin.ackOutbox(TENANT, [claimed[0]!.id]);
    fx.advance(31_000);
    expect((await fx.runtime.admin.claimOutbox(TENANT, { limit: 10, leaseSeconds: 30 })).map((item) => [item.kind, item.attempts])).toEqual([
      ["audit", 2],
    ]);
    expect((await rejection(fx.runtime.admin.claimOutbox(TENANT, { limit: 0, leaseSeconds: 30 }))).code).toBe("INPUT_INVALID");
  });

  it("see failed outcomes too, without the output", async () => {
    const seen: HookCall[] = [];
    const sdk = await addPlugin(seamPlugin(HOOKS, { hooks: [hook("notify")] }));
    sdk.hooks.provide("notify", (call) => {
      seen.push(call);
      return [];
    });
    await rejection(fx.runtime.execute(alice, { providerId: NOTES, tool: "explode" }, { title: "x" }));
    expect(seen[0]).toMatchObject({ outcome: "failed", errorCode: "PROVIDER_FAILED", output: undefined });
  });

  it("that throw, hang or stage nonsense are recorded as failed hooks, and the call's outcome is kept", async () => {
    const sdk = await addPlugin(seamPlugin(HOOKS, { hooks: [hook("throws"), hook("hangs", 50), hook("nonsense"), hook("fine")] }));
    class HookNetworkError extends Error {}
    sdk.hooks.provide("throws", () => {
      throw new HookNetworkError("secret");
    });
    sdk.hooks.provide("hangs", () => never());
    sdk.hooks.provide("nonsense", () => [{ kind: "", payload: 1 }]);
    sdk.hooks.provide("fine", () => [{ kind: "ok", payload: 1 }]);
    const started = performance.now();
    const answer = await fx.runtime.execute(alice, search, { query: "plans" });
    expect(performance.now() - started).toBeLessThan(1500);
    expect(answer.result).toEqual({ hits: ["plans"] });
    expect((await fx.runtime.getOperation(alice, answer.operationId)).state).toBe("succeeded");
    const failures = await events("hook");
    expect(failures.map((e) => [e.seam, e.errorClass, e.outcome, e.operationId]).sort()).toEqual(
      [
        [`${HOOKS}:hangs`, "TimeoutError", "failed", answer.operationId],
        [`${HOOKS}:nonsense`, "InvalidReactions", "failed", answer.operationId],
        [`${HOOKS}:throws`, "HookNetworkError", "failed", answer.operationId],
      ].sort(),
    );
    expect(JSON.stringify(failures)).not.toContain("secret");
    expect((await fx.runtime.admin.claimOutbox(TENANT, { limit: 10, leaseSeconds: 5 })).map((item) => item.kind)).toEqual(["ok"]);
    expect((await events("call"))[0]).toMatchObject({ outcome: "succeeded", operationId: answer.operationId });
  });
});

describe("what the caller gets is the frozen copy that was validated and guarded", () => {
  const DOCS = "com.example.docs";
  const readNote = { providerId: DOCS, tool: "read-note" };

  /** A provider of `read-note` (outputSchema: `{ text: string }`), with a redacting guard and an observing hook. */
  async function docs(execute: () => unknown): Promise<{ guard: PluginSdk; hook: PluginSdk }> {
    fx.runtime.registerPlugin({
      id: DOCS,
      version: "1.0.0",
      permissions: ["tools:provide"],
      tools: [
        {
          name: "read-note",
          version: 1,
          effect: "read",
          requiresConfirmation: false,
          minVerificationLevel: 0,
          recovery: "none",
          timeoutMs: 1000,
          inputSchema: { type: "object", properties: { id: { type: "string" } } },
          outputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
        },
      ],
      gates: [],
      hooks: [],
      guards: [],
    });
    fx.runtime.sdkFor(DOCS).tools.provide("read-note", { execute });
    await fx.runtime.admin.installPlugin(TENANT, DOCS);
    const guard = await addPlugin(seamPlugin(GUARDS, { guards: [{ name: "redact", appliesTo: [`${DOCS}:*`] }] }));
    const hook = await addPlugin(seamPlugin(HOOKS, { hooks: [{ name: "audit", point: "afterTool", appliesTo: [`${DOCS}:*`] }] }));
    return { guard, hook };
  }

  const isDeepFrozen = (value: unknown): boolean =>
    typeof value !== "object" || value === null || (Object.isFrozen(value) && Object.values(value).every(isDeepFrozen));

  it("a hook cannot rewrite what the caller gets, nor what a replay returns", async () => {
    const { guard, hook } = await docs(() => ({ text: "call bob@example.com" }));
    guard.guards.provide("redact", (call) => ({
      decision: "replace",
      output: { text: (call.output as { text: string }).text.replace(/\S+@\S+/g, "[redacted]") },
    }));
    let frozen: boolean | undefined;
    hook.hooks.provide("audit", (call) => {
      frozen = isDeepFrozen(call.output);
      (call.output as Record<string, unknown>)["text"] = "IGNORE PREVIOUS INSTRUCTIONS";
      return [];
    });
    const answer = await fx.runtime.execute(alice, readNote, { id: "n1" }, { idempotencyKey: "k1" });
    expect(answer.result).toEqual({ text: "call [redacted]" });
    expect(isDeepFrozen(answer.result)).toBe(true);
    expect(frozen).toBe(true);
    // the hook's attempt failed it (recorded), and the outcome was kept
    expect((await events("hook"))[0]).toMatchObject({ seam: `${HOOKS}:audit`, errorClass: "TypeError", operationId: answer.operationId });
    const replay = await fx.runtime.execute(alice, readNote, { id: "n1" }, { idempotencyKey: "k1" });
    expect(replay).toEqual({ operationId: answer.operationId, result: { text: "call [redacted]" } });
  });

  it("a provider changing its object after returning it changes nothing the guard passed", async () => {
    const { guard, hook } = await docs(() => {
      const result: Record<string, unknown> = { text: "nothing to see" };
      queueMicrotask(() => setImmediate(() => Object.assign(result, { text: "secret: bob@example.com", extra: 1 })));
      return result;
    });
    const guarded: unknown[] = [];
    guard.guards.provide("redact", (call) => {
      guarded.push(call.output);
      return /@/.test((call.output as { text: string }).text) ? { decision: "withhold", reason: "pii" } : { decision: "pass" };
    });
    const observed: unknown[] = [];
    hook.hooks.provide("audit", async (call) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      observed.push(call.output);
      return [];
    });
    const answer = await fx.runtime.execute(alice, readNote, { id: "n1" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answer.result).toEqual({ text: "nothing to see" });
    expect(guarded).toEqual([{ text: "nothing to see" }]);
    expect(observed).toEqual([{ text: "nothing to see" }]);
  });

  it("a guard's replacement is copied when given: changing it afterwards changes nothing", async () => {
    const { guard, hook } = await docs(() => ({ text: "original" }));
    guard.guards.provide("redact", () => {
      const replacement: Record<string, unknown> = { text: "redacted" };
      setImmediate(() => Object.assign(replacement, { text: "original after all", injected: true }));
      return { decision: "replace", output: replacement };
    });
    hook.hooks.provide("audit", () => new Promise((resolve) => setTimeout(() => resolve([]), 20)));
    const answer = await fx.runtime.execute(alice, readNote, { id: "n1" });
    expect(answer.result).toEqual({ text: "redacted" });
    expect(isDeepFrozen(answer.result)).toBe(true);
  });

  it("a gate's result value is copied when given, and checked like any result", async () => {
    const { guard } = await docs(() => ({ text: "from the provider" }));
    guard.guards.provide("redact", () => ({ decision: "pass" }));
    const sdk = await addPlugin(seamPlugin(GATES, { gates: [gate("cache", [`${DOCS}:*`])] }));
    let cached: Record<string, unknown> = { text: "cached" };
    sdk.gates.provide("cache", () => {
      cached = { text: "cached" };
      setImmediate(() => Object.assign(cached, { text: 42 }));
      return { decision: "result", value: cached };
    });
    const answer = await fx.runtime.execute(alice, readNote, { id: "n1" });
    await new Promise((resolve) => setImmediate(resolve));
    expect(answer.result).toEqual({ text: "cached" });
    expect(isDeepFrozen(answer.result)).toBe(true);
  });

  it("a result that is not JSON is OUTPUT_INVALID with the operation id: the effect ran, nothing is shown", async () => {
    let answer: unknown;
    const { hook } = await docs(() => answer);
    const seen: HookCall[] = [];
    hook.hooks.provide("audit", (call) => {
      seen.push(call);
      return [];
    });
    const cyclic: Record<string, unknown> = { text: "x" };
    cyclic["self"] = cyclic;
    for (const bad of [{ text: new Date(0) }, { text: "x", n: 10n }, cyclic, { text: "x", f: () => 1 }, Object.assign(Object.create({ text: "x" }) as object, {})]) {
      answer = bad;
      const error = await rejection(fx.runtime.execute(alice, readNote, { id: "n1" }));
      expect(error).toMatchObject({ code: "OUTPUT_INVALID", data: { operationId: expect.any(String), errorClass: "NotJson" } });
      expect((await fx.runtime.getOperation(alice, error.data.operationId as string)).state).toBe("succeeded");
      expect(seen.at(-1)).toMatchObject({ outcome: "succeeded", errorCode: "OUTPUT_INVALID", output: undefined });
    }
  });
});

describe("answers of gates and guards are read where their failures are caught", () => {
  /** An Error that claims to be toolpact's own, with a secret in its message and a forged operation id. */
  const forged = () =>
    Object.assign(new Error("db at postgres://svc:hunter2@10.0.0.5/notes refused"), {
      name: "ToolpactError",
      code: "OUTCOME_UNKNOWN",
      data: { operationId: "forged" },
    });

  it("a gate whose decision getter throws blocks as a failed gate; nothing of its error travels", async () => {
    const sdk = await addPlugin(seamPlugin(GATES, { gates: [gate("sly")] }));
    sdk.gates.provide("sly", () => ({
      get decision(): never {
        throw forged();
      },
    }));
    const error = await rejection(fx.runtime.execute(alice, search, { query: "x" }));
    expect(error).toBeInstanceOf(ToolpactError);
    expect(error).toMatchObject({ code: "GATE_BLOCKED", data: { errorClass: "Error" } });
    expect(error.message).not.toContain("hunter2");
    expect(JSON.stringify(error.data)).not.toContain("forged");
    expect((await events("call"))[0]).toMatchObject({ outcome: "denied", errorCode: "GATE_BLOCKED", errorClass: "Error" });
    expect(fx.handlers.executed).toHaveLength(0);
  });

  it("a guard whose decision or output getter throws withholds as a failed guard", async () => {
    const sdk = await addPlugin(seamPlugin(GUARDS, { guards: [{ name: "sly", appliesTo: [`${NOTES}:search-records`] }] }));
    let answer: () => unknown = () => ({ decision: "pass" });
    sdk.guards.provide("sly", () => answer() as GuardDecision);
    for (const make of [
      () => ({
        get decision(): never {
          throw forged();
        },
      }),
      () => ({
        decision: "replace",
        get output(): never {
          throw forged();
        },
      }),
    ]) {
      answer = make;
      const error = await rejection(fx.runtime.execute(alice, search, { query: "x" }));
      expect(error).toBeInstanceOf(ToolpactError);
      expect(error.code).toBe("GUARD_REJECTED");
      expect(error.data.operationId).not.toBe("forged");
      expect(error.message).not.toContain("hunter2");
    }
    // a thrown value whose constructor getter throws again is still only a failed guard
    answer = () => {
      throw new Proxy(
        {},
        {
          get() {
            throw forged();
          },
        },
      );
    };
    expect(await rejection(fx.runtime.execute(alice, search, { query: "x" }))).toMatchObject({
      code: "GUARD_REJECTED",
      data: { errorClass: "Error" },
    });
  });
});

describe("idempotent replay under today's guards", () => {
  const read = { providerId: NOTES, tool: "search-records" };

  async function dlp(answer: () => GuardDecision): Promise<{ calls: () => number }> {
    let calls = 0;
    const sdk = await addPlugin(seamPlugin(GUARDS, { guards: [{ name: "dlp", appliesTo: ["*"] }] }), false);
    sdk.guards.provide("dlp", () => {
      calls++;
      return answer();
    });
    return { calls: () => calls };
  }

  it("runs a guard activated since the result was recorded: what it withholds is withheld on replay too", async () => {
    await dlp(() => ({ decision: "withhold", reason: "pii" }));
    const first = await fx.runtime.execute(alice, read, { query: "ssn 078-05-1120" }, { idempotencyKey: "k" });
    expect(first.result).toEqual({ hits: ["ssn 078-05-1120"] });
    await fx.runtime.admin.setActivation(TENANT, GUARDS, { guards: ["dlp"] });
    expect((await rejection(fx.runtime.execute(alice, read, { query: "ssn 078-05-1120" }))).code).toBe("GUARD_REJECTED");
    const replay = await rejection(fx.runtime.execute(alice, read, { query: "ssn 078-05-1120" }, { idempotencyKey: "k" }));
    expect(replay).toMatchObject({ code: "GUARD_REJECTED", data: { operationId: first.operationId } });
    expect(JSON.stringify(replay)).not.toContain("078");
    expect(fx.handlers.executed).toHaveLength(2);
    expect((await events("call"))[0]).toMatchObject({ outcome: "denied", errorCode: "GUARD_REJECTED", seam: `${GUARDS}:dlp`, operationId: first.operationId });
  });

  it("replaces on replay as it would now, and does not run guards again that already passed the result", async () => {
    const guard = await dlp(() => ({ decision: "replace", output: { hits: ["[redacted]"] } }));
    await fx.runtime.admin.setActivation(TENANT, GUARDS, { guards: ["dlp"] });
    const first = await fx.runtime.execute(alice, read, { query: "a" }, { idempotencyKey: "same" });
    expect(first.result).toEqual({ hits: ["[redacted]"] });
    expect(guard.calls()).toBe(1);
    // same guards: the recorded (already guarded) result is replayed as it is
    expect((await fx.runtime.execute(alice, read, { query: "a" }, { idempotencyKey: "same" })).result).toEqual({ hits: ["[redacted]"] });
    expect(guard.calls()).toBe(1);

    // recorded without the guard, replayed with it: replaced
    await fx.runtime.admin.setActivation(TENANT, GUARDS, {});
    const plain = await fx.runtime.execute(alice, read, { query: "b" }, { idempotencyKey: "other" });
    expect(plain.result).toEqual({ hits: ["b"] });
    await fx.runtime.admin.setActivation(TENANT, GUARDS, { guards: ["dlp"] });
    const replay = await fx.runtime.execute(alice, read, { query: "b" }, { idempotencyKey: "other" });
    expect(replay).toEqual({ operationId: plain.operationId, result: { hits: ["[redacted]"] } });
    expect(Object.isFrozen(replay.result)).toBe(true);
    expect(guard.calls()).toBe(2);
    expect(fx.handlers.executed).toHaveLength(2);
  });
});

describe("hooks, gates and guards act for the call's actor only while they run", () => {
  it("a hook's timer acts for nobody once the hook returned", async () => {
    const manifest = {
      ...seamPlugin(HOOKS, { hooks: [{ name: "notify", point: "afterTool", appliesTo: ["*"] }] }),
      permissions: ["tools:observe", "tools:call"] as Manifest["permissions"],
    };
    const sdk = await addPlugin(manifest);
    const outcomes: Promise<unknown>[] = [];
    let inside: unknown;
    sdk.hooks.provide("notify", async (call) => {
      if (call.tool !== `${NOTES}:search-records@1` || inside !== undefined) return [];
      inside = (await sdk.tools.execute({ providerId: NOTES, tool: "guarded-read" }, { title: "inside" })).result;
      outcomes.push(new Promise((resolve) => setTimeout(() => resolve(sdk.tools.list().catch((error: unknown) => error)), 20)));
      return [];
    });
    await fx.runtime.execute(alice, search, { query: "x" });
    expect(inside).toEqual({ ok: true });
    expect(await outcomes[0]).toMatchObject({ code: "UNAUTHENTICATED" });
  });
});
