/**
 * The refusals of resolve-tool and check-caller (the tool, the caller), one row each: the error (code, message, data)
 * and the activity event, ids and times masked. A refactoring of the call path must leave every row as it is.
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "../api.js";
import { ASSISTANT, LIMITED, NOTES, NO_CALL, TENANT, callerManifest, eachTestFixtureWithAlice, type RuntimeFixture } from "../testing/fixtures.js";
import { pinRefusal } from "../testing/pin-refusal.js";

const search = { providerId: NOTES, tool: "search-records" };
const create = { providerId: NOTES, tool: "create-record", version: 1 };

let fx: RuntimeFixture;
let alice: Principal;
eachTestFixtureWithAlice((made) => ({ fx, alice } = made));

describe("resolve-tool: the tool", () => {
  it("PROVIDER_NOT_FOUND: not a plugin id", async () => {
    expect(await pinRefusal(fx, fx.runtime.execute(alice, { providerId: "Not An Id", tool: "x" }, {}))).toMatchInlineSnapshot(`
      {
        "code": "PROVIDER_NOT_FOUND",
        "data": {},
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "errorCode": "PROVIDER_NOT_FOUND",
          "id": "<id 1>",
          "kind": "call",
          "outcome": "denied",
          "phase": "execute",
          "tenantId": "tenant-a",
          "via": "in-process",
        },
        "message": "ref.providerId is not a plugin id, e.g. "com.example.notes"",
      }
    `);
  });
  it("PROVIDER_NOT_FOUND: not loaded", async () => {
    expect(await pinRefusal(fx, fx.runtime.execute(alice, { providerId: "com.example.nope", tool: "x" }, {}))).toMatchInlineSnapshot(`
      {
        "code": "PROVIDER_NOT_FOUND",
        "data": {},
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "errorCode": "PROVIDER_NOT_FOUND",
          "id": "<id 1>",
          "kind": "call",
          "outcome": "denied",
          "phase": "execute",
          "providerPluginId": "com.example.nope",
          "tenantId": "tenant-a",
          "via": "in-process",
        },
        "message": "no plugin "com.example.nope" is loaded in this host",
      }
    `);
  });
  it("PROVIDER_NOT_FOUND: not installed", async () => {
    fx.runtime.registerPlugin(callerManifest("com.example.elsewhere"));
    expect(await pinRefusal(fx, fx.runtime.execute(alice, { providerId: "com.example.elsewhere", tool: "x" }, {}))).toMatchInlineSnapshot(`
      {
        "code": "PROVIDER_NOT_FOUND",
        "data": {},
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "errorCode": "PROVIDER_NOT_FOUND",
          "id": "<id 1>",
          "kind": "call",
          "outcome": "denied",
          "phase": "execute",
          "providerPluginId": "com.example.elsewhere",
          "tenantId": "tenant-a",
          "via": "in-process",
        },
        "message": "plugin "com.example.elsewhere" is not installed for this tenant: the tenant admin installs it with admin.installPlugin",
      }
    `);
  });
  it("PROVIDER_DISABLED", async () => {
    await fx.runtime.admin.setPluginEnabled(TENANT, NOTES, false);
    expect(await pinRefusal(fx, fx.runtime.execute(alice, search, { query: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "PROVIDER_DISABLED",
        "data": {},
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "errorCode": "PROVIDER_DISABLED",
          "id": "<id 1>",
          "kind": "call",
          "outcome": "denied",
          "phase": "execute",
          "providerPluginId": "com.example.notes",
          "tenantId": "tenant-a",
          "via": "in-process",
        },
        "message": "plugin "com.example.notes" is disabled for this tenant",
      }
    `);
  });
  it("TOOL_NOT_FOUND: not a tool name", async () => {
    expect(await pinRefusal(fx, fx.runtime.execute(alice, { providerId: NOTES, tool: "Drop Table" }, {}))).toMatchInlineSnapshot(`
      {
        "code": "TOOL_NOT_FOUND",
        "data": {},
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "errorCode": "TOOL_NOT_FOUND",
          "id": "<id 1>",
          "kind": "call",
          "outcome": "denied",
          "phase": "execute",
          "providerPluginId": "com.example.notes",
          "tenantId": "tenant-a",
          "via": "in-process",
        },
        "message": "ref.tool is not a tool name, e.g. "create-record"",
      }
    `);
  });
  it("TOOL_NOT_FOUND: not declared", async () => {
    expect(await pinRefusal(fx, fx.runtime.execute(alice, { providerId: NOTES, tool: "drop-table" }, {}))).toMatchInlineSnapshot(`
      {
        "code": "TOOL_NOT_FOUND",
        "data": {},
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "errorCode": "TOOL_NOT_FOUND",
          "id": "<id 1>",
          "kind": "call",
          "outcome": "denied",
          "phase": "execute",
          "providerPluginId": "com.example.notes",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:drop-table",
          "via": "in-process",
        },
        "message": "plugin "com.example.notes" declares no tool "drop-table"",
      }
    `);
  });
  it("VERSION_UNSUPPORTED", async () => {
    expect(await pinRefusal(fx, fx.runtime.execute(alice, { ...create, version: 7 }, { title: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "VERSION_UNSUPPORTED",
        "data": {},
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "errorCode": "VERSION_UNSUPPORTED",
          "id": "<id 1>",
          "kind": "call",
          "outcome": "denied",
          "phase": "execute",
          "providerPluginId": "com.example.notes",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:create-record@7",
          "version": 7,
          "via": "in-process",
        },
        "message": "com.example.notes:create-record has no version 7; declared: 2, 1",
      }
    `);
  });
  it("HANDLER_MISSING", async () => {
    expect(await pinRefusal(fx, fx.runtime.execute(alice, { providerId: NOTES, tool: "unprovided" }, { title: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "HANDLER_MISSING",
        "data": {
          "tool": "com.example.notes:unprovided@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "read",
          "errorCode": "HANDLER_MISSING",
          "id": "<id 1>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "outcome": "denied",
          "phase": "execute",
          "providerPluginId": "com.example.notes",
          "schemaHash": "c0f00621ba42dc1169cada464288b7e72467105c72f48a996833673ce4435390",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:unprovided@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "com.example.notes:unprovided@1 is declared but its provider registered no handler: the provider must call sdk.tools.provide",
      }
    `);
  });
});

describe("check-caller: the caller", () => {
  it("CALLER_DISABLED", async () => {
    await fx.runtime.admin.setPluginEnabled(TENANT, ASSISTANT, false);
    expect(await pinRefusal(fx, fx.runtime.execute(alice, search, { query: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "CALLER_DISABLED",
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
          "errorCode": "CALLER_DISABLED",
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
        "message": "the calling plugin "com.example.assistant" is not enabled for this tenant",
      }
    `);
  });
  it("PERMISSION_DENIED: no tools:call", async () => {
    const caller = await fx.principal(NO_CALL);
    expect(await pinRefusal(fx, fx.runtime.execute(caller, search, { query: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "PERMISSION_DENIED",
        "data": {
          "tool": "com.example.notes:search-records@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.nocall",
          "durationMs": "<duration>",
          "effect": "read",
          "errorCode": "PERMISSION_DENIED",
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
        "message": "plugin "com.example.nocall" does not hold the "tools:call" permission: add it to its manifest's permissions",
      }
    `);
  });
  it("PERMISSION_DENIED: outside uses", async () => {
    const caller = await fx.principal(LIMITED);
    expect(await pinRefusal(fx, fx.runtime.execute(caller, create, { title: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "PERMISSION_DENIED",
        "data": {
          "tool": "com.example.notes:create-record@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.limited",
          "durationMs": "<duration>",
          "effect": "write",
          "errorCode": "PERMISSION_DENIED",
          "id": "<id 1>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "outcome": "denied",
          "phase": "execute",
          "providerPluginId": "com.example.notes",
          "schemaHash": "c0f00621ba42dc1169cada464288b7e72467105c72f48a996833673ce4435390",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:create-record@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "plugin "com.example.limited" may not call com.example.notes:create-record@1: its manifest's "uses" does not include it",
      }
    `);
  });
  it("RUN_DENIED", async () => {
    expect(await pinRefusal(fx, fx.runtime.execute(alice, search, { query: "x" }, { runId: "no-such-run" }))).toMatchInlineSnapshot(`
      {
        "code": "RUN_DENIED",
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
          "errorCode": "RUN_DENIED",
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
        "message": "run "no-such-run" is not a run of this caller and user: open one with runs.open and pass its runId",
      }
    `);
  });
});
