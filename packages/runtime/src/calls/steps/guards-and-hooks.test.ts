/**
 * Guards (apply-guards) and AfterTool hooks (after-tool-hooks): pass, replace or withhold the output; staged
 * reactions and failed hooks committed with the operation.
 */
import Database from "better-sqlite3";
import { beforeEach, describe, expect, it } from "vitest";
import type { GuardDeclaration, HookDeclaration, Manifest } from "@toolpact/contract";
import type { ActivityEvent, Principal } from "../../api.js";
import type { PluginSdk } from "../../plugin-sdk.js";
import type { GuardDecision, HookCall, StagedReaction } from "../../seams.js";
import { NOTES, TENANT, eachTestFixtureWithAlice, rejection, type RuntimeFixture } from "../../testing/fixtures.js";
import { addSeamPlugin, seamPlugin, tenantEvents, never } from "../../testing/seam-plugins.js";

const HOOKS = "com.example.hooks";
const GUARDS = "com.example.guards";
const search = { providerId: NOTES, tool: "search-records" };
const create = { providerId: NOTES, tool: "create-record", version: 1 };

let fx: RuntimeFixture;
let alice: Principal;
eachTestFixtureWithAlice((made) => ({ fx, alice } = made));

/** Registers, installs and activates a seam plugin; returns its SDK. */
const addPlugin = (manifest: Manifest, activate = true): Promise<PluginSdk> => addSeamPlugin(fx, manifest, activate);
const events = (kind?: ActivityEvent["kind"]) => tenantEvents(fx, kind);

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
    expect((await fx.runtime.admin.claimOutbox(TENANT, { limit: 10, leaseSeconds: 30 })).map((item) => [item.kind, item.attempts])).toEqual([["audit", 2]]);
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
