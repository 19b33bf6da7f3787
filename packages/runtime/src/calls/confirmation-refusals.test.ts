/**
 * The refusals of replay-idempotent and verify-confirmation (idempotency keys, confirmation) and of the preview rate limit, one row each:
 * the error and the activity event, ids and times masked.
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "../api.js";
import { NOTES, eachTestFixtureWithAlice, type RuntimeFixture } from "../testing/fixtures.js";
import { pinRefusal } from "../testing/pin-refusal.js";

const search = { providerId: NOTES, tool: "search-records" };
const create = { providerId: NOTES, tool: "create-record", version: 1 };

let fx: RuntimeFixture;
let alice: Principal;
eachTestFixtureWithAlice((made) => ({ fx, alice } = made));

async function tokenFor(input: unknown): Promise<string> {
  const preview = await fx.runtime.preview(alice, create, input);
  return (preview.confirmation as { token: string }).token;
}

describe("replay-idempotent and verify-confirmation", () => {
  it("INPUT_INVALID: the idempotency key", async () => {
    expect(await pinRefusal(fx, fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "k".repeat(300) }))).toMatchInlineSnapshot(`
      {
        "code": "INPUT_INVALID",
        "data": {
          "issues": [
            {
              "message": "must be 1 to 256 visible ASCII characters (no spaces or control characters)",
              "path": "/idempotencyKey",
            },
          ],
        },
        "message": "idempotencyKey is malformed: it must be 1 to 256 visible ASCII characters (no spaces or control characters)",
      }
    `);
  });
  it("IDEMPOTENCY_CONFLICT", async () => {
    await fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "k" });
    expect(await pinRefusal(fx, fx.runtime.execute(alice, search, { query: "y" }, { idempotencyKey: "k" }))).toMatchInlineSnapshot(`
      {
        "code": "IDEMPOTENCY_CONFLICT",
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
          "errorCode": "IDEMPOTENCY_CONFLICT",
          "id": "<id 1>",
          "idempotencyKeyHash": "<digest>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "outcome": "denied",
          "phase": "execute",
          "policyDecision": "allow",
          "providerPluginId": "com.example.notes",
          "schemaHash": "10798ac8d2df2a3150d204e10be2e4fb12cc89650fb68e3a6d3b4b38e1914e26",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:search-records@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "this idempotency key was used for com.example.notes:search-records@1 with a different input: use a new key for a new call",
      }
    `);
  });
  it("OPERATION_IN_PROGRESS", async () => {
    const held = { providerId: NOTES, tool: "hold-read" };
    const first = fx.runtime.execute(alice, held, { title: "x" }, { idempotencyKey: "k" });
    while (fx.handlers.executed.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    const pinned = await pinRefusal(fx, fx.runtime.execute(alice, held, { title: "x" }, { idempotencyKey: "k" }));
    fx.handlers.release!();
    await first;
    expect(pinned).toMatchInlineSnapshot(`
      {
        "code": "OPERATION_IN_PROGRESS",
        "data": {
          "operationId": "<id 1>",
          "tool": "com.example.notes:hold-read@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "read",
          "errorCode": "OPERATION_IN_PROGRESS",
          "id": "<id 2>",
          "idempotencyKeyHash": "<digest>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "operationId": "<id 1>",
          "outcome": "denied",
          "phase": "execute",
          "policyDecision": "allow",
          "providerPluginId": "com.example.notes",
          "schemaHash": "c0f00621ba42dc1169cada464288b7e72467105c72f48a996833673ce4435390",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:hold-read@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "operation <id 1> with this idempotency key is still running: read it with tools.operation, or retry later",
      }
    `);
  });
  it("CONFIRMATION_REQUIRED", async () => {
    expect(await pinRefusal(fx, fx.runtime.execute(alice, create, { title: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "CONFIRMATION_REQUIRED",
        "data": {
          "tool": "com.example.notes:create-record@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "write",
          "errorCode": "CONFIRMATION_REQUIRED",
          "id": "<id 1>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "outcome": "denied",
          "phase": "execute",
          "policyDecision": "confirm",
          "providerPluginId": "com.example.notes",
          "schemaHash": "c0f00621ba42dc1169cada464288b7e72467105c72f48a996833673ce4435390",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:create-record@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "com.example.notes:create-record@1 requires confirmation: call preview first and pass its confirmationToken",
      }
    `);
  });
  it("CONFIRMATION_INVALID", async () => {
    expect(await pinRefusal(fx, fx.runtime.execute(alice, create, { title: "x" }, { confirmationToken: "not.a.token" }))).toMatchInlineSnapshot(`
      {
        "code": "CONFIRMATION_INVALID",
        "data": {
          "tool": "com.example.notes:create-record@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "write",
          "errorCode": "CONFIRMATION_INVALID",
          "id": "<id 1>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "outcome": "denied",
          "phase": "execute",
          "policyDecision": "confirm",
          "providerPluginId": "com.example.notes",
          "schemaHash": "c0f00621ba42dc1169cada464288b7e72467105c72f48a996833673ce4435390",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:create-record@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "the confirmation token for com.example.notes:create-record@1 is not valid: it is not a compact JWS (three base64url segments)",
      }
    `);
  });
  it("CONFIRMATION_MISMATCH", async () => {
    const token = await tokenFor({ title: "x" });
    expect(await pinRefusal(fx, fx.runtime.execute(alice, create, { title: "y" }, { confirmationToken: token }))).toMatchInlineSnapshot(`
      {
        "code": "CONFIRMATION_MISMATCH",
        "data": {
          "tool": "com.example.notes:create-record@1",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "effect": "write",
          "errorCode": "CONFIRMATION_MISMATCH",
          "id": "<id 1>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "outcome": "denied",
          "phase": "execute",
          "policyDecision": "confirm",
          "providerPluginId": "com.example.notes",
          "schemaHash": "c0f00621ba42dc1169cada464288b7e72467105c72f48a996833673ce4435390",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:create-record@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "the confirmation token does not match this call to com.example.notes:create-record@1: the input differs from the previewed input; preview this exact call again",
      }
    `);
  });
  it("CONFIRMATION_USED", async () => {
    const token = await tokenFor({ title: "x" });
    await fx.runtime.execute(alice, create, { title: "x" }, { confirmationToken: token });
    expect(await pinRefusal(fx, fx.runtime.execute(alice, create, { title: "x" }, { confirmationToken: token }))).toMatchInlineSnapshot(`
      {
        "code": "CONFIRMATION_USED",
        "data": {
          "operationId": "<id 1>",
          "tool": "com.example.notes:create-record@1",
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
          "errorCode": "CONFIRMATION_USED",
          "id": "<id 3>",
          "kind": "call",
          "manifestVersion": "1.0.0",
          "operationId": "<id 1>",
          "outcome": "denied",
          "phase": "execute",
          "policyDecision": "confirm",
          "providerPluginId": "com.example.notes",
          "schemaHash": "c0f00621ba42dc1169cada464288b7e72467105c72f48a996833673ce4435390",
          "tenantId": "tenant-a",
          "tool": "com.example.notes:create-record@1",
          "version": 1,
          "via": "in-process",
        },
        "message": "this confirmation for com.example.notes:create-record@1 was already used by operation <id 1>: read its outcome with tools.operation; preview again to confirm another call",
      }
    `);
  });
  it("RATE_LIMITED: previews", async () => {
    const limited = await fx.reopen({ rateLimits: { previewsPerMinute: 1 } });
    await limited.preview(alice, search, { query: "x" });
    expect(await pinRefusal(fx, limited.preview(alice, search, { query: "x" }))).toMatchInlineSnapshot(`
      {
        "code": "RATE_LIMITED",
        "data": {
          "retryAfterMs": "<ms>",
        },
        "event": {
          "actorUserId": "alice",
          "at": "<time>",
          "authenticatedBy": "plugin-key",
          "callerPluginId": "com.example.assistant",
          "durationMs": "<duration>",
          "errorCode": "RATE_LIMITED",
          "id": "<id 1>",
          "kind": "call",
          "outcome": "denied",
          "phase": "preview",
          "tenantId": "tenant-a",
          "via": "in-process",
        },
        "message": "too many previews by this caller for this user: at most 1 a minute; retry in <n> s",
      }
    `);
  });
});
