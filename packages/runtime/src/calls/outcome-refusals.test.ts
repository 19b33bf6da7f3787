/**
 * The refusals of gates, and the errors of operations that ran (provider failures, timeouts, invalid
 * or withheld output, replayed failures), one row each: the error and the activity event, ids and times
 * masked. Every error after an effect carries its operation id.
 */
import { describe, expect, it } from "vitest";
import type { Manifest } from "@toolpact/contract";
import type { Principal } from "../api.js";
import { NOTES, TENANT, eachTestFixtureWithAlice, type RuntimeFixture } from "../testing/fixtures.js";
import { pinRefusal } from "../testing/pin-refusal.js";

const search = { providerId: NOTES, tool: "search-records" };
const SEAMS = "com.example.seams";

let fx: RuntimeFixture;
let alice: Principal;
eachTestFixtureWithAlice((made) => ({ fx, alice } = made));

async function confirmed(tool: string): Promise<{ confirmationToken: string }> {
  const preview = await fx.runtime.preview(alice, { providerId: NOTES, tool }, { title: "x" });
  return { confirmationToken: (preview.confirmation as { token: string }).token };
}

/** A plugin with one gate and one guard on search-records, answering as told. */
async function seams(gate: () => unknown, guard: () => unknown): Promise<void> {
  const manifest: Manifest = {
    id: SEAMS,
    version: "1.0.0",
    permissions: ["tools:gate", "tools:guard"],
    tools: [],
    gates: [{ name: "hours", appliesTo: [`${NOTES}:search-records`] }],
    hooks: [],
    guards: [{ name: "redact", appliesTo: [`${NOTES}:search-records`] }],
  };
  fx.runtime.registerPlugin(manifest);
  fx.runtime.sdkFor(SEAMS).gates.provide("hours", gate as never);
  fx.runtime.sdkFor(SEAMS).guards.provide("redact", guard as never);
  await fx.runtime.admin.installPlugin(TENANT, SEAMS);
  await fx.runtime.admin.setActivation(TENANT, SEAMS, { gates: ["hours"], guards: ["redact"] });
}

describe("apply-gates", () => {
  it("GATE_BLOCKED: a block", async () => {
    await seams(
      () => ({ decision: "block", reason: "outside business hours" }),
      () => ({ decision: "pass" }),
    );
    expect(await pinRefusal(fx, fx.runtime.execute(alice, search, { query: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "GATE_BLOCKED",
        "data": {
          "tool": "com.example.notes:search-records@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "read",
          "errorCode": "GATE_BLOCKED",
          "id": "<id 1>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "outcome": "denied",
          "phase": "execute",
          "policyDecision": "allow",
          "providerPluginId": "com.example.notes",
          "schemaHash": "10798ac8d2df2a3150d204e10be2e4fb12cc89650fb68e3a6d3b4b38e1914e26",
          "seam": "com.example.seams:hours",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:search-records@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "com.example.notes:search-records@1 was blocked by gate com.example.seams:hours: outside business hours",
      }
    `);
  });
  it("GATE_BLOCKED: a gate that throws", async () => {
    await seams(
      () => {
        throw new SyntaxError("oops");
      },
      () => ({ decision: "pass" }),
    );
    expect(await pinRefusal(fx, fx.runtime.preview(alice, search, { query: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "GATE_BLOCKED",
        "data": {
          "errorClass": "SyntaxError",
          "tool": "com.example.notes:search-records@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "read",
          "errorClass": "SyntaxError",
          "errorCode": "GATE_BLOCKED",
          "id": "<id 1>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "outcome": "denied",
          "phase": "preview",
          "policyDecision": "allow",
          "providerPluginId": "com.example.notes",
          "schemaHash": "10798ac8d2df2a3150d204e10be2e4fb12cc89650fb68e3a6d3b4b38e1914e26",
          "seam": "com.example.seams:hours",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:search-records@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "com.example.notes:search-records@1 was blocked by gate com.example.seams:hours: the gate failed (fail closed); its message is not forwarded",
      }
    `);
  });
  it("GATE_BLOCKED: nonsense", async () => {
    await seams(
      () => ({ decision: "maybe" }),
      () => ({ decision: "pass" }),
    );
    expect(await pinRefusal(fx, fx.runtime.execute(alice, search, { query: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "GATE_BLOCKED",
        "data": {
          "errorClass": "InvalidGateDecision",
          "tool": "com.example.notes:search-records@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "read",
          "errorClass": "InvalidGateDecision",
          "errorCode": "GATE_BLOCKED",
          "id": "<id 1>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "outcome": "denied",
          "phase": "execute",
          "policyDecision": "allow",
          "providerPluginId": "com.example.notes",
          "schemaHash": "10798ac8d2df2a3150d204e10be2e4fb12cc89650fb68e3a6d3b4b38e1914e26",
          "seam": "com.example.seams:hours",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:search-records@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "com.example.notes:search-records@1 was blocked by gate com.example.seams:hours: the gate gave no valid decision (fail closed)",
      }
    `);
  });
});

describe("the effect and its settle: the operation ran", () => {
  it("PROVIDER_FAILED: the provider threw", async () => {
    expect(await pinRefusal(fx, fx.runtime.execute(alice, { providerId: NOTES, tool: "explode" }, { title: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "PROVIDER_FAILED",
        "data": {
          "errorClass": "ProviderDatabaseError",
          "operationId": "<id 1>",
          "tool": "com.example.notes:explode@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "read",
          "errorClass": "ProviderDatabaseError",
          "errorCode": "PROVIDER_FAILED",
          "id": "<id 2>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "operationId": "<id 1>",
          "outcome": "failed",
          "phase": "execute",
          "policyDecision": "allow",
          "providerPluginId": "com.example.notes",
          "schemaHash": "c0f00621ba42dc1169cada464288b7e72467105c72f48a996833673ce4435390",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:explode@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "the provider of com.example.notes:explode@1 failed (operation <id 1>); its message is not forwarded",
      }
    `);
  });
  it("PROVIDER_FAILED: a read that timed out", async () => {
    expect(await pinRefusal(fx, fx.runtime.execute(alice, { providerId: NOTES, tool: "slow-read" }, { title: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "PROVIDER_FAILED",
        "data": {
          "errorClass": "TimeoutError",
          "operationId": "<id 1>",
          "tool": "com.example.notes:slow-read@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "read",
          "errorClass": "TimeoutError",
          "errorCode": "PROVIDER_FAILED",
          "id": "<id 2>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "operationId": "<id 1>",
          "outcome": "failed",
          "phase": "execute",
          "policyDecision": "allow",
          "providerPluginId": "com.example.notes",
          "schemaHash": "c0f00621ba42dc1169cada464288b7e72467105c72f48a996833673ce4435390",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:slow-read@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "the provider of com.example.notes:slow-read@1 failed (operation <id 1>); its message is not forwarded",
      }
    `);
  });
  it("OUTCOME_UNKNOWN: a write that timed out", async () => {
    const options = await confirmed("slow-write");
    expect(await pinRefusal(fx, fx.runtime.execute(alice, { providerId: NOTES, tool: "slow-write" }, { title: "x" }, options))).toMatchInlineSnapshot(`
      {
        "code": "OUTCOME_UNKNOWN",
        "data": {
          "errorClass": "TimeoutError",
          "operationId": "<id 1>",
          "tool": "com.example.notes:slow-write@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "confirmation": "token",
          "confirmationId": "<id 2>",
          "confirmedBy": "alice",
          "durationMs": "<duration>",
          "effect": "write",
          "errorClass": "TimeoutError",
          "errorCode": "OUTCOME_UNKNOWN",
          "id": "<id 3>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "operationId": "<id 1>",
          "outcome": "unknown",
          "phase": "execute",
          "policyDecision": "confirm",
          "providerPluginId": "com.example.notes",
          "schemaHash": "c0f00621ba42dc1169cada464288b7e72467105c72f48a996833673ce4435390",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:slow-write@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "com.example.notes:slow-write@1 did not answer in time; its effect may or may not have happened (operation <id 1>): read the operation before retrying",
      }
    `);
  });
  it("OUTPUT_INVALID", async () => {
    expect(await pinRefusal(fx, fx.runtime.execute(alice, { providerId: NOTES, tool: "bad-output" }, { title: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "OUTPUT_INVALID",
        "data": {
          "operationId": "<id 1>",
          "tool": "com.example.notes:bad-output@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "read",
          "errorCode": "OUTPUT_INVALID",
          "id": "<id 2>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "operationId": "<id 1>",
          "outcome": "succeeded",
          "phase": "execute",
          "policyDecision": "allow",
          "providerPluginId": "com.example.notes",
          "schemaHash": "c0f00621ba42dc1169cada464288b7e72467105c72f48a996833673ce4435390",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:bad-output@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "com.example.notes:bad-output@1 ran (operation <id 1>) but its result does not match its outputSchema: the result is withheld",
      }
    `);
  });
  it("GUARD_REJECTED: a withhold", async () => {
    await seams(
      () => ({ decision: "allow" }),
      () => ({ decision: "withhold", reason: "secret" }),
    );
    expect(await pinRefusal(fx, fx.runtime.execute(alice, search, { query: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "GUARD_REJECTED",
        "data": {
          "operationId": "<id 1>",
          "tool": "com.example.notes:search-records@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "read",
          "errorCode": "GUARD_REJECTED",
          "id": "<id 2>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "operationId": "<id 1>",
          "outcome": "succeeded",
          "phase": "execute",
          "policyDecision": "allow",
          "providerPluginId": "com.example.notes",
          "schemaHash": "10798ac8d2df2a3150d204e10be2e4fb12cc89650fb68e3a6d3b4b38e1914e26",
          "seam": "com.example.seams:redact",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:search-records@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "com.example.notes:search-records@1 ran (operation <id 1>) but a guard withheld its output: the effect happened, the result is not shown",
      }
    `);
  });
  it("OUTPUT_INVALID: a guard's replacement that is not JSON", async () => {
    await seams(
      () => ({ decision: "allow" }),
      () => ({ decision: "replace", output: { at: new Date(0), f: () => 1 } }),
    );
    expect(await pinRefusal(fx, fx.runtime.execute(alice, search, { query: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "OUTPUT_INVALID",
        "data": {
          "errorClass": "InvalidReplacement",
          "operationId": "<id 1>",
          "tool": "com.example.notes:search-records@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "read",
          "errorClass": "InvalidReplacement",
          "errorCode": "OUTPUT_INVALID",
          "id": "<id 2>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "operationId": "<id 1>",
          "outcome": "succeeded",
          "phase": "execute",
          "policyDecision": "allow",
          "providerPluginId": "com.example.notes",
          "schemaHash": "10798ac8d2df2a3150d204e10be2e4fb12cc89650fb68e3a6d3b4b38e1914e26",
          "seam": "com.example.seams:redact",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:search-records@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "com.example.notes:search-records@1 ran (operation <id 1>) but its result does not match its outputSchema: the result is withheld",
      }
    `);
  });
  it("PROVIDER_FAILED: a recorded failure, replayed", async () => {
    const explode = { providerId: NOTES, tool: "explode" };
    await pinRefusal(fx, fx.runtime.execute(alice, explode, { title: "x" }, { idempotencyKey: "k" }));
    expect(await pinRefusal(fx, fx.runtime.execute(alice, explode, { title: "x" }, { idempotencyKey: "k" }))).toMatchInlineSnapshot(`
      {
        "code": "PROVIDER_FAILED",
        "data": {
          "operationId": "<id 1>",
          "tool": "com.example.notes:explode@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "read",
          "errorCode": "PROVIDER_FAILED",
          "id": "<id 2>",
          "idempotencyKeyHash": "<digest>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "operationId": "<id 1>",
          "outcome": "failed",
          "phase": "execute",
          "policyDecision": "allow",
          "providerPluginId": "com.example.notes",
          "schemaHash": "c0f00621ba42dc1169cada464288b7e72467105c72f48a996833673ce4435390",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:explode@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "the provider of com.example.notes:explode@1 failed (operation <id 1>); its message is not forwarded",
      }
    `);
    expect(fx.handlers.executed).toHaveLength(1);
  });
});
