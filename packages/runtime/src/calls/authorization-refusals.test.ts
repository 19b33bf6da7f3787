/**
 * The refusals of validate-input, decide-permission and provider-authorize and of plugin code that
 * fails before any effect, one row each: the error and the activity event, ids and times masked.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { Manifest } from "@toolpact/contract";
import type { Principal } from "../api.js";
import { ALLOW_ALL, NOTES, TENANT, eachTestFixtureWithAlice, tool, type RuntimeFixture } from "../testing/fixtures.js";
import { pinRefusal } from "../testing/pin-refusal.js";

const search = { providerId: NOTES, tool: "search-records" };
const FLAKY = "com.example.flaky";

let fx: RuntimeFixture;
let alice: Principal;
eachTestFixtureWithAlice((made) => ({ fx, alice } = made));

describe("validate-input, decide-permission, provider-authorize", () => {
  it("INPUT_INVALID: the input", async () => {
    expect(await pinRefusal(fx, fx.runtime.execute(alice, search, { query: 7, extra: true }))).toMatchInlineSnapshot(`
      {
        "code": "INPUT_INVALID",
        "data": {
          "issues": [
            {
              "message": "must be string",
              "path": "/query",
            },
            {
              "message": "must NOT have additional properties: 'extra'",
              "path": "/extra",
            },
          ],
          "tool": "com.example.notes:search-records@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "read",
          "errorCode": "INPUT_INVALID",
          "id": "<id 1>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "outcome": "denied",
          "phase": "execute",
          "providerPluginId": "com.example.notes",
          "schemaHash": "10798ac8d2df2a3150d204e10be2e4fb12cc89650fb68e3a6d3b4b38e1914e26",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:search-records@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "the input of com.example.notes:search-records@1 does not match its inputSchema at /query: must be string (and 1 more)",
      }
    `);
  });
  it("PERMISSION_DENIED: the policy", async () => {
    await fx.runtime.admin.setPolicy(TENANT, { rules: [...ALLOW_ALL.rules, { tools: `${NOTES}:search-records`, decision: "deny" }] });
    expect(await pinRefusal(fx, fx.runtime.execute(alice, search, { query: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "PERMISSION_DENIED",
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
          "errorCode": "PERMISSION_DENIED",
          "id": "<id 1>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "outcome": "denied",
          "phase": "execute",
          "policyDecision": "deny",
          "providerPluginId": "com.example.notes",
          "schemaHash": "10798ac8d2df2a3150d204e10be2e4fb12cc89650fb68e3a6d3b4b38e1914e26",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:search-records@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "com.example.notes:search-records@1 is not permitted for this caller and user: a deny rule of the tenant policy ("com.example.notes:search-records") matches this call",
      }
    `);
  });
  it("VERIFICATION_REQUIRED", async () => {
    expect(await pinRefusal(fx, fx.runtime.execute(alice, { providerId: NOTES, tool: "verified-read" }, { title: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "VERIFICATION_REQUIRED",
        "data": {
          "tool": "com.example.notes:verified-read@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "read",
          "errorCode": "VERIFICATION_REQUIRED",
          "id": "<id 1>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "outcome": "denied",
          "phase": "execute",
          "policyDecision": "deny",
          "providerPluginId": "com.example.notes",
          "schemaHash": "c0f00621ba42dc1169cada464288b7e72467105c72f48a996833673ce4435390",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:verified-read@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "com.example.notes:verified-read@1 needs verification level 2; the user is at 1: the user must verify further",
      }
    `);
  });
  it("PERMISSION_DENIED: the provider's authorize", async () => {
    fx.handlers.authorizeAnswer = false;
    expect(await pinRefusal(fx, fx.runtime.execute(alice, { providerId: NOTES, tool: "guarded-read" }, { title: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "PERMISSION_DENIED",
        "data": {
          "tool": "com.example.notes:guarded-read@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "read",
          "errorCode": "PERMISSION_DENIED",
          "id": "<id 1>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "outcome": "denied",
          "phase": "execute",
          "policyDecision": "allow",
          "providerPluginId": "com.example.notes",
          "schemaHash": "c0f00621ba42dc1169cada464288b7e72467105c72f48a996833673ce4435390",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:guarded-read@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "the provider of com.example.notes:guarded-read@1 refused this call for this user",
      }
    `);
  });
});

describe("plugin code that fails before any effect", () => {
  beforeEach(async () => {
    const flaky: Manifest = {
      id: FLAKY,
      version: "1.0.0",
      permissions: ["tools:provide"],
      tools: [tool({ name: "bad-preview", effect: "write" }), tool({ name: "bad-authorize", effect: "read" })],
      gates: [],
      hooks: [],
      guards: [],
    };
    fx.runtime.registerPlugin(flaky);
    const sdk = fx.runtime.sdkFor(FLAKY);
    sdk.tools.provide("bad-preview", { preview: () => ({ summary: 42 }) as never, execute: () => ({}) });
    sdk.tools.provide("bad-authorize", {
      authorize: () => {
        throw new RangeError("no");
      },
      execute: () => ({}),
    });
    await fx.runtime.admin.installPlugin(TENANT, FLAKY);
  });
  it("PROVIDER_FAILED: a preview without a summary", async () => {
    expect(await pinRefusal(fx, fx.runtime.preview(alice, { providerId: FLAKY, tool: "bad-preview" }, { title: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "PROVIDER_FAILED",
        "data": {
          "errorClass": "InvalidPreview",
          "tool": "com.example.flaky:bad-preview@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "write",
          "errorClass": "InvalidPreview",
          "errorCode": "PROVIDER_FAILED",
          "id": "<id 1>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "outcome": "failed",
          "phase": "preview",
          "policyDecision": "confirm",
          "providerPluginId": "com.example.flaky",
          "schemaHash": "c0f00621ba42dc1169cada464288b7e72467105c72f48a996833673ce4435390",
          "tenantId": "tenant-a",
          "tool": "com.example.flaky:bad-preview@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "the provider's preview of com.example.flaky:bad-preview@1 returned no summary string",
      }
    `);
  });
  it("PROVIDER_FAILED: an authorize that throws", async () => {
    expect(await pinRefusal(fx, fx.runtime.execute(alice, { providerId: FLAKY, tool: "bad-authorize" }, { title: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "PROVIDER_FAILED",
        "data": {
          "errorClass": "RangeError",
          "tool": "com.example.flaky:bad-authorize@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "read",
          "errorClass": "RangeError",
          "errorCode": "PROVIDER_FAILED",
          "id": "<id 1>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "outcome": "failed",
          "phase": "execute",
          "policyDecision": "allow",
          "providerPluginId": "com.example.flaky",
          "schemaHash": "c0f00621ba42dc1169cada464288b7e72467105c72f48a996833673ce4435390",
          "tenantId": "tenant-a",
          "tool": "com.example.flaky:bad-authorize@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "the provider's authorize of com.example.flaky:bad-authorize@1 failed; its message is not forwarded",
      }
    `);
  });
});
