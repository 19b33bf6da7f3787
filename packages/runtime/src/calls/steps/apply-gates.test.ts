/**
 * Gates (apply-gates): registered only as declared, acting only where activated and within appliesTo; the
 * most restrictive answer wins; they fail closed.
 */
import { describe, expect, it } from "vitest";
import type { Manifest } from "@toolpact/contract";
import type { ActivityEvent, Principal } from "../../api.js";
import type { PluginSdk } from "../../plugin-sdk.js";
import type { GateCall, GateDecision, SeamContext } from "../../seams.js";
import { ALLOW_ALL, NOTES, TENANT, eachTestFixtureWithAlice, rejection, type RuntimeFixture } from "../../testing/fixtures.js";
import { addSeamPlugin, seamPlugin, tenantEvents, gate, never } from "../../testing/seam-plugins.js";

const GATES = "com.example.gates";
const MORE_GATES = "com.example.moregates";
const search = { providerId: NOTES, tool: "search-records" };
const create = { providerId: NOTES, tool: "create-record", version: 1 };
const bad = { providerId: NOTES, tool: "bad-output" };

let fx: RuntimeFixture;
let alice: Principal;
eachTestFixtureWithAlice((made) => ({ fx, alice } = made));

/** Registers, installs and activates a seam plugin; returns its SDK. */
const addPlugin = (manifest: Manifest, activate = true): Promise<PluginSdk> => addSeamPlugin(fx, manifest, activate);
const events = (kind?: ActivityEvent["kind"]) => tenantEvents(fx, kind);

describe("registration is capability-bound", () => {
  it("refuses an undeclared gate, hook or guard, a second function, and a non-function", async () => {
    const sdk = await addPlugin(seamPlugin(GATES, { gates: [gate("hours")], hooks: [{ name: "notify", point: "afterTool", appliesTo: ["*"] }] }), false);
    expect(() => sdk.gates.provide("other", () => ({ decision: "allow" }))).toThrow(
      expect.objectContaining({ code: "CAPABILITY_UNDECLARED", message: expect.stringContaining('declares "hours"') }),
    );
    expect(() => sdk.guards.provide("hours", () => ({ decision: "pass" }))).toThrow(expect.objectContaining({ code: "CAPABILITY_UNDECLARED" }));
    expect(() => sdk.hooks.provide("hours", () => [])).toThrow(expect.objectContaining({ code: "CAPABILITY_UNDECLARED" }));
    expect(() => sdk.gates.provide("hours", "allow" as never)).toThrow(expect.objectContaining({ code: "HANDLER_INVALID" }));
    sdk.gates.provide("hours", () => ({ decision: "allow" }));
    expect(() => sdk.gates.provide("hours", () => ({ decision: "block", reason: "x" }))).toThrow(
      expect.objectContaining({ code: "HANDLER_INVALID", message: expect.stringContaining("provided once") }),
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
    const error = await rejection(fx.runtime.admin.setActivation(TENANT, GATES, { gates: ["hours", "nope"], hooks: ["ghost"], guards: ["phantom"] }));
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
    expect((await rejection(fx.runtime.execute(verified, { providerId: NOTES, tool: "verified-read" }, { title: "x" }))).code).toBe("GATE_BLOCKED");
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
    expect((await rejection(fx.runtime.execute(alice, { providerId: NOTES, tool: "guarded-read" }, { title: "x" }))).code).toBe("PERMISSION_DENIED");
    expect(calls).toBe(0);
  });

  it("blocks when a gate throws, hangs past its timeout, answers nonsense, or has no function", async () => {
    const sdk = await addPlugin(seamPlugin(GATES, { gates: [gate("throws", [`${NOTES}:search-records`]), gate("hangs", [`${NOTES}:guarded-read`], 50)] }));
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
    for (const [sdk, name] of [
      [first, "first"],
      [first, "second"],
      [second, "third"],
    ] as const) {
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
    const manifest = {
      ...seamPlugin(GATES, { gates: [gate("peek", [`${NOTES}:create-record`])] }),
      permissions: ["tools:gate", "tools:call"] as Manifest["permissions"],
    };
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
