/**
 * The HTTP API end to end: a real server on 127.0.0.1:0, a real SQLite file, a provider activated in
 * process and callers reaching it over HTTP with their own plugin keys and actor tokens minted with jose.
 * Every security rule is a test that tries to break it.
 */
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isToolpactError } from "../../packages/contract/src/index.js";
import {
  ABSENT_PROVIDER_ID,
  ASSISTANT_ID,
  IDLE_CALLER_ID,
  MUTE_CALLER_ID,
  NARROW_CALLER_ID,
  OTHER_CALLER_ID,
  PAUSED_PROVIDER_ID,
  PROVIDER_ID,
} from "./support/plugins.js";
import { callerHeadersOf, configureWorld, type CallerHeaders, type Tenant, makeSecrets, startStack, type Stack, type WorldKeys } from "./support/stack.js";
import { mintActorToken, tamperJws, unsignedToken, decodeJws } from "./support/tokens.js";
import { callerHeaders, mutate, mutateText, ok, query, type WireResponse } from "./support/wire.js";

const CANARY = `canary-${randomBytes(6).toString("hex")}`;

let dir: string;
let stack: Stack;
let keys: WorldKeys;
let as: CallerHeaders;
const secrets = makeSecrets();
/** Moves the runtime's clock (ms). */
let clockOffset = 0;
/** Every denial from step 2 on that a test caused: the activity log must hold each one. */
const denials: { tenantId: string; userId: string; errorCode: string }[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-http-"));
  stack = await startStack({ dbFile: path.join(dir, "toolpact.db"), secrets, clock: () => Date.now() + clockOffset });
  keys = await configureWorld(stack);
  as = callerHeadersOf(keys, secrets.actorSecret);
});

afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function ref(tool: string, version?: number) {
  return version === undefined ? { providerId: PROVIDER_ID, tool } : { providerId: PROVIDER_ID, tool, version };
}

function preview(headers: Record<string, string>, tool: string, input: unknown, extra: Record<string, unknown> = {}) {
  return mutate(stack.url, "tools.preview", { ref: ref(tool), input, ...extra }, headers);
}

function execute(headers: Record<string, string>, tool: string, input: unknown, extra: Record<string, unknown> = {}) {
  return mutate(stack.url, "tools.execute", { ref: ref(tool), input, ...extra }, headers);
}

/** Previews and returns the token-mode confirmation token. */
async function tokenFor(headers: Record<string, string>, tool: string, input: unknown, version?: number): Promise<string> {
  const answer = ok<{ confirmation: { required: boolean; mode?: string; token?: string } }>(
    await mutate(stack.url, "tools.preview", { ref: ref(tool, version), input }, headers),
  );
  expect(answer.confirmation).toMatchObject({ required: true, mode: "token" });
  return answer.confirmation.token!;
}

function codeOf(response: WireResponse): unknown {
  return response.body.error?.data.toolpactCode;
}

/** Asserts a toolpact error code (and HTTP status), and notes a denial the activity log must hold. */
function expectDenied(response: WireResponse, code: string, status: number, note?: { userId: string; tenantId?: Tenant }) {
  expect(response.body.error, JSON.stringify(response.body)).toBeDefined();
  expect(codeOf(response)).toBe(code);
  expect(response.status).toBe(status);
  if (note) denials.push({ tenantId: note.tenantId ?? "t1", userId: note.userId, errorCode: code });
}

function invocations(tool: string): number {
  return stack.probe.invocations.get(tool) ?? 0;
}

/** Re-signs a compact JWS with another key (a forged signature over the same header and claims). */
function resign(token: string, key: Uint8Array): string {
  const [header, payload] = token.split(".");
  const signature = createHmac("sha256", key).update(`${header}.${payload}`).digest("base64url");
  return `${header}.${payload}.${signature}`;
}

describe("confirmation tokens over HTTP", () => {
  it("preview hands a trusted UI a token; execute with it runs the provider once", async () => {
    const headers = await as(ASSISTANT_ID);
    const input = { title: "Q3 plan" };
    const answer = ok<{ summary: string; details: unknown; confirmation: Record<string, unknown> }>(await preview(headers, "create-note", input));
    expect(answer.summary).toBe('Create note "Q3 plan"');
    expect(answer.confirmation).toMatchObject({ required: true, mode: "token" });
    const before = invocations("create-note");
    const result = ok<{ operationId: string; result: { title: string } }>(
      await execute(headers, "create-note", input, { confirmationToken: answer.confirmation.token }),
    );
    expect(result.result.title).toBe("Q3 plan");
    expect(result.operationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(invocations("create-note")).toBe(before + 1);
  });

  it("a write without a token is refused before the provider runs", async () => {
    const before = invocations("create-note");
    expectDenied(await execute(await as(ASSISTANT_ID, { sub: "u-no-token" }), "create-note", { title: "x" }), "CONFIRMATION_REQUIRED", 412, {
      userId: "u-no-token",
    });
    expect(invocations("create-note")).toBe(before);
  });

  it("refuses a token whose signature is forged", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-forged" });
    const input = { title: "forged" };
    const token = await tokenFor(headers, "create-note", input);
    const before = invocations("create-note");
    const forged = resign(token, new Uint8Array(randomBytes(32)));
    expectDenied(await execute(headers, "create-note", input, { confirmationToken: forged }), "CONFIRMATION_INVALID", 400, { userId: "u-forged" });
    // A forged claim under the old signature is refused too.
    const tampered = tamperJws(token, { payload: { sub: "someone-else" } });
    expectDenied(await execute(headers, "create-note", input, { confirmationToken: tampered }), "CONFIRMATION_INVALID", 400);
    expect(invocations("create-note")).toBe(before);
  });

  it("refuses malformed tokens: appended segment, truncation, garbage, wrong typ", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-malformed" });
    const input = { title: "malformed" };
    const token = await tokenFor(headers, "create-note", input);
    const before = invocations("create-note");
    const malformed = [
      `${token}.x`,
      token.slice(0, -3),
      token.split(".").slice(0, 2).join("."),
      "not-a-token",
      "a.b.c",
      tamperJws(token, { header: { typ: "JWT" } }),
    ];
    for (const candidate of malformed) {
      expectDenied(await execute(headers, "create-note", input, { confirmationToken: candidate }), "CONFIRMATION_INVALID", 400);
    }
    // Larger than any token the body accepts: refused by the body schema.
    expectDenied(await execute(headers, "create-note", input, { confirmationToken: "x".repeat(9000) }), "INPUT_INVALID", 400);
    expect(invocations("create-note")).toBe(before);
    // None of those consumed the real token.
    ok(await execute(headers, "create-note", input, { confirmationToken: token }));
  });

  it('refuses alg "none" and an algorithm swap', async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-alg" });
    const input = { title: "alg" };
    const token = await tokenFor(headers, "create-note", input);
    const { header, payload } = decodeJws(token);
    const none = unsignedToken(payload, { ...header, alg: "none" });
    expectDenied(await execute(headers, "create-note", input, { confirmationToken: none }), "CONFIRMATION_INVALID", 400);
    const hs512 = tamperJws(token, { header: { alg: "HS512" } });
    expectDenied(await execute(headers, "create-note", input, { confirmationToken: hs512 }), "CONFIRMATION_INVALID", 400);
    ok(await execute(headers, "create-note", input, { confirmationToken: token }));
  });

  it("refuses a token with an unknown kid, even when signed with a real signing key", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-kid" });
    const input = { title: "kid" };
    const token = await tokenFor(headers, "create-note", input);
    expect(decodeJws(token).header.kid).toBe("k1");
    const unknownKid = resign(tamperJws(token, { header: { kid: "k9" } }), secrets.signingKeys[0]!.key);
    expectDenied(await execute(headers, "create-note", input, { confirmationToken: unknownKid }), "CONFIRMATION_INVALID", 400);
  });

  it("refuses an expired token (TTL 300 s plus 5 s skew)", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-expired" });
    const input = { title: "expired" };
    const token = await tokenFor(headers, "create-note", input);
    clockOffset = 310_000;
    try {
      expectDenied(await execute(headers, "create-note", input, { confirmationToken: token }), "CONFIRMATION_EXPIRED", 412, { userId: "u-expired" });
    } finally {
      clockOffset = 0;
    }
  });

  it("a replayed token is CONFIRMATION_USED and tells the bound caller the operation id", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-replay" });
    const input = { title: "replay" };
    const token = await tokenFor(headers, "create-note", input);
    const first = ok<{ operationId: string }>(await execute(headers, "create-note", input, { confirmationToken: token }));
    const before = invocations("create-note");
    const second = await execute(headers, "create-note", input, { confirmationToken: token });
    expectDenied(second, "CONFIRMATION_USED", 409, { userId: "u-replay" });
    expect(second.body.error!.data.toolpactData).toMatchObject({ operationId: first.operationId });
    expect(invocations("create-note")).toBe(before);
  });

  it("50 concurrent executes of one token: exactly one provider invocation, the rest CONFIRMATION_USED", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-race" });
    const input = { title: "race" };
    const token = await tokenFor(headers, "create-note", input);
    const before = invocations("create-note");
    const answers = await Promise.all(Array.from({ length: 50 }, () => execute(headers, "create-note", input, { confirmationToken: token })));
    const succeeded = answers.filter((answer) => answer.status === 200);
    const used = answers.filter((answer) => codeOf(answer) === "CONFIRMATION_USED");
    expect(succeeded).toHaveLength(1);
    expect(used).toHaveLength(49);
    expect(invocations("create-note")).toBe(before + 1);
  });

  it("input changed after preview is a mismatch, and the mismatch does not consume the token", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-changed" });
    const token = await tokenFor(headers, "create-note", { title: "original" });
    expectDenied(await execute(headers, "create-note", { title: "changed" }, { confirmationToken: token }), "CONFIRMATION_MISMATCH", 412, {
      userId: "u-changed",
    });
    expectDenied(await execute(headers, "create-note", { title: "original", body: "extra" }, { confirmationToken: token }), "CONFIRMATION_MISMATCH", 412);
    ok(await execute(headers, "create-note", { title: "original" }, { confirmationToken: token }));
  });

  it("the same input with its keys reordered still matches (canonical digest)", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-reorder" });
    const token = await tokenFor(headers, "create-note", { title: "ordered", body: "b", nested: { a: 1, b: [1, 2] } });
    ok(await execute(headers, "create-note", { nested: { b: [1, 2], a: 1 }, body: "b", title: "ordered" }, { confirmationToken: token }));
  });

  it("a token is bound to its actor, caller, tenant, tool and version", async () => {
    const input = { title: "bound" };
    const owner = await as(ASSISTANT_ID, { sub: "u-bound" });
    const token = await tokenFor(owner, "create-note", input);
    const v1Token = await tokenFor(owner, "versioned", input, 1);
    const before = invocations("create-note");

    const otherActor = await as(ASSISTANT_ID, { sub: "u-bound-other" });
    expectDenied(await execute(otherActor, "create-note", input, { confirmationToken: token }), "CONFIRMATION_MISMATCH", 412, {
      userId: "u-bound-other",
    });
    const otherCaller = await as(OTHER_CALLER_ID, { sub: "u-bound" });
    expectDenied(await execute(otherCaller, "create-note", input, { confirmationToken: token }), "CONFIRMATION_MISMATCH", 412, {
      userId: "u-bound",
    });
    const otherTenant = await as(ASSISTANT_ID, { sub: "u-bound" }, "t2");
    expectDenied(await execute(otherTenant, "create-note", input, { confirmationToken: token }), "CONFIRMATION_MISMATCH", 412, {
      userId: "u-bound",
      tenantId: "t2",
    });
    expectDenied(await execute(owner, "versioned", input, { confirmationToken: token }), "CONFIRMATION_MISMATCH", 412);
    const v2 = await mutate(stack.url, "tools.execute", { ref: ref("versioned", 2), input, confirmationToken: v1Token }, owner);
    expectDenied(v2, "CONFIRMATION_MISMATCH", 412);
    expect(invocations("create-note")).toBe(before);
    expect(invocations("versioned@2")).toBe(0);

    // None of the attempts consumed either token.
    ok(await execute(owner, "create-note", input, { confirmationToken: token }));
    ok(await mutate(stack.url, "tools.execute", { ref: ref("versioned", 1), input, confirmationToken: v1Token }, owner));
  });

  it("a caller not bound to a used token learns nothing about the operation", async () => {
    const input = { title: "secret op" };
    const owner = await as(ASSISTANT_ID, { sub: "u-nosy" });
    const token = await tokenFor(owner, "create-note", input);
    const done = ok<{ operationId: string }>(await execute(owner, "create-note", input, { confirmationToken: token }));
    const nosy = await execute(await as(OTHER_CALLER_ID, { sub: "u-nosy" }), "create-note", input, { confirmationToken: token });
    expect(nosy.body.error).toBeDefined();
    expect(JSON.stringify(nosy.body)).not.toContain(done.operationId);
  });

  it("a token sent to a tool that needs none is ignored, not consumed", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-ignored" });
    const input = { title: "ignored" };
    const token = await tokenFor(headers, "create-note", input);
    ok(await execute(headers, "list-notes", {}, { confirmationToken: token }));
    ok(await execute(headers, "create-note", input, { confirmationToken: token }));
  });

  it("a denial does not burn the token: disabled provider, then enabled again", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-burn" });
    const input = { title: "burn" };
    const token = await tokenFor(headers, "create-note", input);
    await stack.admin("setPluginEnabled", { tenantId: "t1", pluginId: PROVIDER_ID, enabled: false });
    try {
      expectDenied(await execute(headers, "create-note", input, { confirmationToken: token }), "PROVIDER_DISABLED", 403, { userId: "u-burn" });
    } finally {
      await stack.admin("setPluginEnabled", { tenantId: "t1", pluginId: PROVIDER_ID, enabled: true });
    }
    ok(await execute(headers, "create-note", input, { confirmationToken: token }));
  });
});

describe("identities: plugin keys and actor tokens", () => {
  const input = {};

  it("refuses a missing, forged, malformed or revoked plugin key", async () => {
    const actor = await mintActorToken(secrets.actorSecret, { sub: "u-keys" });
    const real = keys.t1[ASSISTANT_ID]!;
    const forged = `tpk_${real.keyId}_${randomBytes(32).toString("base64url")}`;
    const invented = `tpk_${randomBytes(10).toString("hex")}_${randomBytes(32).toString("base64url")}`;
    for (const key of [undefined, forged, invented, "not-a-key", `${real.key}x`]) {
      expectDenied(await execute(callerHeaders(key, actor), "list-notes", input), "UNAUTHENTICATED", 401);
    }
    const issued = await stack.admin<{ keyId: string; key: string }>("issuePluginKey", { tenantId: "t1", pluginId: ASSISTANT_ID });
    ok(await execute(callerHeaders(issued.key, actor), "list-notes", input));
    await stack.admin("revokePluginKey", { tenantId: "t1", keyId: issued.keyId });
    expectDenied(await execute(callerHeaders(issued.key, actor), "list-notes", input), "UNAUTHENTICATED", 401);
    // The other live keys of the plugin keep working (rotation).
    ok(await execute(callerHeaders(real.key, actor), "list-notes", input));
  });

  it("refuses a missing, forged, expired, unsigned or misaddressed actor token", async () => {
    const key = keys.t1[ASSISTANT_ID]!.key;
    const good = await mintActorToken(secrets.actorSecret, { sub: "u-actor" });
    const bad = [
      undefined,
      await mintActorToken(secrets.actorSecret, { sub: "u-actor", secret: new Uint8Array(randomBytes(32)) }),
      await mintActorToken(secrets.actorSecret, { sub: "u-actor", expiresIn: -60 }),
      await mintActorToken(secrets.actorSecret, { sub: "u-actor", aud: "someone-else" }),
      await mintActorToken(secrets.actorSecret, { sub: "u-actor", iss: "https://evil.example" }),
      await mintActorToken(secrets.actorSecret, { sub: "u-actor", lvl: 9 }),
      unsignedToken({ ...decodeJws(good).payload }),
      tamperJws(good, { payload: { lvl: 3 } }),
      `${good}.x`,
    ];
    for (const actorToken of bad) {
      expectDenied(await execute(callerHeaders(key, actorToken), "list-notes", input), "UNAUTHENTICATED", 401);
    }
    ok(await execute(callerHeaders(key, good), "list-notes", input));
  });

  it("refuses an actor token of another tenant than the plugin key", async () => {
    const key = keys.t1[ASSISTANT_ID]!.key;
    const t2Actor = await mintActorToken(secrets.actorSecret, { sub: "u-cross", tid: "t2" });
    expectDenied(await execute(callerHeaders(key, t2Actor), "list-notes", input), "UNAUTHENTICATED", 401);
    const t2Key = keys.t2[ASSISTANT_ID]!.key;
    ok(await execute(callerHeaders(t2Key, t2Actor), "list-notes", input));
  });

  it("refuses an actor token issued to another plugin (azp)", async () => {
    const key = keys.t1[ASSISTANT_ID]!.key;
    const forOther = await mintActorToken(secrets.actorSecret, { sub: "u-azp", azp: OTHER_CALLER_ID });
    expectDenied(await execute(callerHeaders(key, forOther), "list-notes", input), "UNAUTHENTICATED", 401);
    const forMe = await mintActorToken(secrets.actorSecret, { sub: "u-azp", azp: ASSISTANT_ID });
    ok(await execute(callerHeaders(key, forMe), "list-notes", input));
  });

  it("counts step-1 failures in the server log, never in the tenant's activity", async () => {
    const before = stack.runtime.metrics.authFailures;
    const logged = stack.logs.length;
    await execute(callerHeaders(undefined, undefined), "list-notes", input);
    expect(stack.runtime.metrics.authFailures).toBe(before + 1);
    expect(stack.logs.slice(logged).some((line) => line.includes("authentication_failed"))).toBe(true);
    const adminBefore = stack.server.adminAuthFailures;
    await mutate(stack.url, "admin.installPlugin", { tenantId: "t1", pluginId: PROVIDER_ID }, { authorization: "Bearer nope" });
    expect(stack.server.adminAuthFailures).toBe(adminBefore + 1);
    expect(stack.logs.some((line) => line.includes("admin_authentication_failed"))).toBe(true);
  });

  it("admin procedures need the admin key: none, a wrong one or a plugin key is refused", async () => {
    const body = { tenantId: "t1", pluginId: ABSENT_PROVIDER_ID };
    for (const headers of [{}, { authorization: "Bearer wrong" }, { authorization: `Bearer ${keys.t1[ASSISTANT_ID]!.key}` }, await as(ASSISTANT_ID)]) {
      expectDenied(await mutate(stack.url, "admin.installPlugin", body, headers), "UNAUTHENTICATED", 401);
    }
    const listed = await query(stack.url, "admin.listActivity", { tenantId: "t1" }, { authorization: `Bearer ${secrets.adminKey}x` });
    expectDenied(listed, "UNAUTHENTICATED", 401);
    expect(listed.body.result).toBeUndefined();
  });
});

describe("the pipeline's refusals", () => {
  it("provider not installed, disabled, tool or version unknown, no handler", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-resolve" });
    const note = { userId: "u-resolve" };
    const call = (providerId: string, tool: string, version?: number) =>
      mutate(stack.url, "tools.execute", { ref: { providerId, tool, ...(version ? { version } : {}) }, input: {} }, headers);
    expectDenied(await call(ABSENT_PROVIDER_ID, "ping"), "PROVIDER_NOT_FOUND", 404, note);
    expectDenied(await call("com.test.nowhere", "ping"), "PROVIDER_NOT_FOUND", 404, note);
    expectDenied(await call(PAUSED_PROVIDER_ID, "ping"), "PROVIDER_DISABLED", 403, note);
    expectDenied(await call(PROVIDER_ID, "no-such-tool"), "TOOL_NOT_FOUND", 404, note);
    expectDenied(await call(PROVIDER_ID, "list-notes", 7), "VERSION_UNSUPPORTED", 404, note);
    expectDenied(await call(PROVIDER_ID, "unhandled"), "HANDLER_MISSING", 501, note);
  });

  it("caller disabled, without tools:call, or outside its uses", async () => {
    expectDenied(await execute(await as(IDLE_CALLER_ID, { sub: "u-idle" }), "list-notes", {}), "CALLER_DISABLED", 403, { userId: "u-idle" });
    expectDenied(await execute(await as(MUTE_CALLER_ID, { sub: "u-mute" }), "list-notes", {}), "PERMISSION_DENIED", 403, { userId: "u-mute" });
    const narrow = await as(NARROW_CALLER_ID, { sub: "u-narrow" });
    expectDenied(await execute(narrow, "echo", {}), "PERMISSION_DENIED", 403, { userId: "u-narrow" });
    expectDenied(await preview(narrow, "create-note", { title: "x" }), "PERMISSION_DENIED", 403, { userId: "u-narrow" });
    ok(await execute(narrow, "list-notes", {}));
  });

  it("an actor below the tool's verification level is refused", async () => {
    expectDenied(await execute(await as(ASSISTANT_ID, { sub: "u-level", lvl: 1 }), "verified-read", {}), "VERIFICATION_REQUIRED", 403, {
      userId: "u-level",
    });
    ok(await execute(await as(ASSISTANT_ID, { sub: "u-level", lvl: 2 }), "verified-read", {}));
  });

  it("invalid input is INPUT_INVALID with every issue, before the provider runs", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-input" });
    const answer = await preview(headers, "create-note", { title: 42, surprise: true });
    expectDenied(answer, "INPUT_INVALID", 400, { userId: "u-input" });
    const issues = (answer.body.error!.data.toolpactData as { issues: { path: string }[] }).issues;
    expect(issues.length).toBeGreaterThanOrEqual(2);
  });

  it("a deeply nested input is refused as INPUT_INVALID, not a crash", async () => {
    const depth = 100_000;
    const nested = '{"a":'.repeat(depth) + "{}" + "}".repeat(depth);
    const body = `{"ref":${JSON.stringify(ref("deep"))},"input":${nested}}`;
    expect(body.length).toBeLessThan(1024 * 1024);
    // Past the body's own depth bound: refused while it streams in, before step 1 (so not in the activity log).
    const answer = await mutateText(stack.url, "tools.execute", body, await as(ASSISTANT_ID, { sub: "u-deep" }));
    expectDenied(answer, "INPUT_INVALID", 400);
    expect(answer.body.error!.message).toMatch(/nest|depth/i);
    // Within the body's bound but past the input's (64): the runtime refuses it, and records the denial.
    const past = `{"ref":${JSON.stringify(ref("deep"))},"input":${'{"a":'.repeat(70)}{}${"}".repeat(70)}}`;
    const refused = await mutateText(stack.url, "tools.execute", past, await as(ASSISTANT_ID, { sub: "u-deep" }));
    expectDenied(refused, "INPUT_INVALID", 400, { userId: "u-deep" });
    expect(refused.body.error!.message).toMatch(/nested more than 64 levels/);
    ok(await execute(await as(ASSISTANT_ID), "list-notes", {}));
  });

  it("actor, tenant or caller in the body are refused; in the tool input they are just input", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-smuggle" });
    for (const extra of [{ actor: { userId: "admin" } }, { tenantId: "t2" }, { callerPluginId: OTHER_CALLER_ID }, { principal: {} }]) {
      const answer = await execute(headers, "echo", {}, extra);
      expectDenied(answer, "INPUT_INVALID", 400);
      expect(answer.body.error!.message).toMatch(/unknown key/);
    }
    const smuggled = { actor: { userId: "admin", verificationLevel: 3 }, tenantId: "t2", callerPluginId: OTHER_CALLER_ID, userId: "admin" };
    const echoed = ok<{ result: { input: unknown; seen: Record<string, unknown> } }>(await execute(headers, "echo", smuggled));
    expect(echoed.result.input).toEqual(smuggled);
    expect(echoed.result.seen).toEqual({
      tenantId: "t1",
      userId: "u-smuggle",
      callerPluginId: ASSISTANT_ID,
      tool: `${PROVIDER_ID}:echo@1`,
    });
  });

  it("a provider cannot register an undeclared tool, under another id, or without tools:provide", () => {
    const capabilityError = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        return isToolpactError(error) ? error.code : `not a ToolpactError: ${String(error)}`;
      }
      return "no error";
    };
    const notes = stack.runtime.sdkFor(PROVIDER_ID);
    expect(capabilityError(() => notes.tools.provide("undeclared-tool", { execute: () => 1 }))).toBe("CAPABILITY_UNDECLARED");
    expect(
      capabilityError(() => notes.tools.provideAll({ providerId: PAUSED_PROVIDER_ID, tools: [{ name: "ping", version: 1, handler: { execute: () => 1 } }] })),
    ).toBe("CAPABILITY_UNDECLARED");
    expect(
      capabilityError(() => notes.tools.provideAll({ providerId: PROVIDER_ID, tools: [{ name: "list-notes", version: 9, handler: { execute: () => 1 } }] })),
    ).toBe("CAPABILITY_UNDECLARED");
    expect(capabilityError(() => stack.runtime.sdkFor(ASSISTANT_ID).tools.provide("create-note", { execute: () => 1 }))).toBe("CAPABILITY_UNDECLARED");
  });

  it("a provider that throws: PROVIDER_FAILED with its error class, never its message", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-broken" });
    const input = { title: `boom ${CANARY}` };
    const token = await tokenFor(headers, "broken", input);
    const answer = await execute(headers, "broken", input, { confirmationToken: token });
    expectDenied(answer, "PROVIDER_FAILED", 500);
    expect(answer.body.error!.data.toolpactData).toMatchObject({ errorClass: "RangeError" });
    expect(JSON.stringify(answer.body)).not.toContain(CANARY);
    expect(JSON.stringify(answer.body)).not.toContain("exploded");
    const { events } = await stack.adminQuery<{ events: Record<string, unknown>[] }>("listActivity", { tenantId: "t1", limit: 50 });
    expect(events.find((event) => event.actorUserId === "u-broken" && event.phase === "execute")).toMatchObject({
      outcome: "failed",
      errorCode: "PROVIDER_FAILED",
      errorClass: "RangeError",
    });
  });

  it("a provider that times out: OUTCOME_UNKNOWN with the operation id, and the operation is unknown", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-slow" });
    const input = { title: "slow" };
    const token = await tokenFor(headers, "slow-note", input);
    const answer = await execute(headers, "slow-note", input, { confirmationToken: token });
    expectDenied(answer, "OUTCOME_UNKNOWN", 500);
    const operationId = (answer.body.error!.data.toolpactData as { operationId?: string }).operationId;
    expect(operationId).toBeTypeOf("string");
    const operation = ok<{ state: string }>(await query(stack.url, "tools.operation", { operationId }, headers));
    expect(operation.state).toBe("unknown");
  });
});

describe("tools.list", () => {
  it("lists what this caller may call, with schemas", async () => {
    const all = ok<{ fullName: string; inputSchema: unknown; effect: string }[]>(await query(stack.url, "tools.list", undefined, await as(ASSISTANT_ID)));
    const createNote = all.find((tool) => tool.fullName === `${PROVIDER_ID}:create-note@1`);
    expect(createNote).toMatchObject({ effect: "write", inputSchema: { type: "object" } });
    expect(all.some((tool) => tool.fullName.startsWith(`${PAUSED_PROVIDER_ID}:`))).toBe(false);
    expect(all.some((tool) => tool.fullName.startsWith(`${ABSENT_PROVIDER_ID}:`))).toBe(false);
    const narrow = ok<{ fullName: string }[]>(await query(stack.url, "tools.list", undefined, await as(NARROW_CALLER_ID)));
    expect(narrow.map((tool) => tool.fullName)).toEqual([`${PROVIDER_ID}:list-notes@1`]);
    expectDenied(await query(stack.url, "tools.list", undefined, callerHeaders(keys.t1[ASSISTANT_ID]!.key, undefined)), "UNAUTHENTICATED", 401);
  });
});

describe("tools.find", () => {
  it("answers one tool as tools.list lists it for this caller, or null for one it would not list", async () => {
    const find = async (headers: Record<string, string>, ref: Record<string, unknown>) =>
      ok<{ fullName: string } | null>(await query(stack.url, "tools.find", { ref }, headers));
    const assistant = await as(ASSISTANT_ID);
    const listed = ok<{ fullName: string }[]>(await query(stack.url, "tools.list", undefined, assistant));
    const createNote = listed.find((tool) => tool.fullName === `${PROVIDER_ID}:create-note@1`);
    expect(await find(assistant, { providerId: PROVIDER_ID, tool: "create-note" })).toEqual(createNote);
    expect(await find(assistant, { providerId: PROVIDER_ID, tool: "create-note", version: 1 })).toEqual(createNote);
    expect(await find(assistant, { providerId: PROVIDER_ID, tool: "create-note", version: 9 })).toBeNull();
    expect(await find(assistant, { providerId: PROVIDER_ID, tool: "no-such-tool" })).toBeNull();
    expect(await find(assistant, { providerId: PAUSED_PROVIDER_ID, tool: "ping" })).toBeNull();
    // The narrow caller's manifest uses one tool: every other is null, as absent from its list.
    const narrow = await as(NARROW_CALLER_ID);
    expect(await find(narrow, { providerId: PROVIDER_ID, tool: "create-note" })).toBeNull();
    expect((await find(narrow, { providerId: PROVIDER_ID, tool: "list-notes" }))?.fullName).toBe(`${PROVIDER_ID}:list-notes@1`);
    expectDenied(
      await query(stack.url, "tools.find", { ref: { providerId: PROVIDER_ID, tool: "echo" } }, callerHeaders(keys.t1[ASSISTANT_ID]!.key, undefined)),
      "UNAUTHENTICATED",
      401,
    );
    expectDenied(await query(stack.url, "tools.find", { ref: { providerId: PROVIDER_ID } }, assistant), "INPUT_INVALID", 400);
  });
});

describe("idempotency and operations", () => {
  it("same key and input: one invocation and the recorded result; other input: IDEMPOTENCY_CONFLICT", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-idem" });
    const before = invocations("echo");
    const first = ok<{ operationId: string; result: unknown }>(await execute(headers, "echo", { n: 1 }, { idempotencyKey: "key-1" }));
    const again = ok<{ operationId: string; result: unknown }>(await execute(headers, "echo", { n: 1 }, { idempotencyKey: "key-1" }));
    expect(again).toEqual(first);
    expect(invocations("echo")).toBe(before + 1);
    expectDenied(await execute(headers, "echo", { n: 2 }, { idempotencyKey: "key-1" }), "IDEMPOTENCY_CONFLICT", 409, { userId: "u-idem" });
    expect(invocations("echo")).toBe(before + 1);
  });

  it("another actor's or caller's idempotency key does not collide", async () => {
    const before = invocations("echo");
    const a = ok<{ operationId: string }>(await execute(await as(ASSISTANT_ID, { sub: "u-idem-a" }), "echo", { n: 1 }, { idempotencyKey: "shared" }));
    const b = ok<{ operationId: string }>(await execute(await as(ASSISTANT_ID, { sub: "u-idem-b" }), "echo", { n: 2 }, { idempotencyKey: "shared" }));
    const c = ok<{ operationId: string }>(await execute(await as(OTHER_CALLER_ID, { sub: "u-idem-a" }), "echo", { n: 3 }, { idempotencyKey: "shared" }));
    expect(new Set([a.operationId, b.operationId, c.operationId]).size).toBe(3);
    expect(invocations("echo")).toBe(before + 3);
  });

  it("tools.operation answers only the caller and actor that ran it", async () => {
    const owner = await as(ASSISTANT_ID, { sub: "u-op" });
    const { operationId } = ok<{ operationId: string }>(await execute(owner, "echo", { op: true }));
    const mine = ok<{ operationId: string; state: string; tool: string }>(await query(stack.url, "tools.operation", { operationId }, owner));
    expect(mine).toMatchObject({ operationId, state: "succeeded", tool: `${PROVIDER_ID}:echo@1` });
    for (const stranger of [
      await as(ASSISTANT_ID, { sub: "u-op-other" }),
      await as(OTHER_CALLER_ID, { sub: "u-op" }),
      await as(ASSISTANT_ID, { sub: "u-op" }, "t2"),
    ]) {
      const answer = await query(stack.url, "tools.operation", { operationId }, stranger);
      expect(answer.body.error, JSON.stringify(answer.body)).toBeDefined();
      expect(answer.body.result).toBeUndefined();
      expect(JSON.stringify(answer.body)).not.toContain("succeeded");
    }
  });

  it("activity.list shows a user their own events only", async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-activity" });
    ok(await execute(headers, "list-notes", {}));
    const page = ok<{ events: { actorUserId?: string; tenantId: string }[] }>(await query(stack.url, "activity.list", { limit: 100 }, headers));
    expect(page.events.length).toBeGreaterThan(0);
    expect(page.events.every((event) => event.actorUserId === "u-activity" && event.tenantId === "t1")).toBe(true);
  });
});

describe("HTTP plumbing", () => {
  it("refuses a body over the limit with 413, by declared length and while streaming", async () => {
    const headers = { ...(await as(ASSISTANT_ID)), "content-type": "application/json" };
    const big = JSON.stringify({ ref: ref("echo"), input: { blob: "x".repeat(1_100_000) } });
    const declared = await fetch(`${stack.url}/trpc/tools.execute`, { method: "POST", headers, body: big });
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as WireResponse["body"]).error?.data.toolpactCode).toBe("INPUT_INVALID");
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    const streamed = await fetch(`${stack.url}/trpc/tools.execute`, {
      method: "POST",
      headers,
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < 24; i++) controller.enqueue(chunk);
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(streamed.status).toBe(413);
  });

  it("serves /healthz and /readyz", async () => {
    const health = await fetch(`${stack.url}/healthz`);
    expect([health.status, await health.text()]).toEqual([200, "ok"]);
    const ready = await fetch(`${stack.url}/readyz`);
    expect(ready.status).toBe(200);
    expect((await fetch(`${stack.url}/nowhere`)).status).toBe(404);
  });
});

describe("what is kept", () => {
  it("every denial from step 2 on is in the tenant's activity log", async () => {
    const events: Record<string, unknown>[] = [];
    for (const tenantId of ["t1", "t2"]) {
      let cursor: string | undefined;
      do {
        const page = await stack.adminQuery<{ events: Record<string, unknown>[]; nextCursor?: string }>("listActivity", {
          tenantId,
          limit: 500,
          ...(cursor ? { cursor } : {}),
        });
        events.push(...page.events);
        cursor = page.nextCursor;
      } while (cursor);
    }
    expect(denials.length).toBeGreaterThan(20);
    const missing = denials.filter(
      (denial) =>
        !events.some(
          (event) =>
            event.tenantId === denial.tenantId &&
            event.actorUserId === denial.userId &&
            event.errorCode === denial.errorCode &&
            (event.outcome === "denied" || event.outcome === "failed"),
        ),
    );
    expect(missing).toEqual([]);
  });

  it(`the canary in inputs, outputs and provider errors is never in the database, its WAL or the logs`, async () => {
    const headers = await as(ASSISTANT_ID, { sub: "u-canary" });
    const input = { title: `secret ${CANARY}`, body: `body ${CANARY}` };
    const token = await tokenFor(headers, "create-note", input);
    const done = ok<{ result: { title: string } }>(await execute(headers, "create-note", input, { confirmationToken: token, idempotencyKey: "canary" }));
    expect(done.result.title).toContain(CANARY);
    ok(await execute(headers, "echo", { note: CANARY }, { idempotencyKey: "canary-echo" }));
    await execute(headers, "create-note", { title: CANARY.repeat(10) });
    const files = [stack.dbFile, `${stack.dbFile}-wal`, `${stack.dbFile}-shm`];
    let scanned = Buffer.alloc(0);
    for (const file of files) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(file);
      } catch {
        continue;
      }
      scanned = Buffer.concat([scanned, bytes]);
      expect(bytes.includes(Buffer.from(CANARY)), file).toBe(false);
      expect(bytes.includes(Buffer.from(CANARY, "utf16le")), file).toBe(false);
    }
    // Positive control: the scan sees what is stored in plaintext (the actor id of the activity rows).
    expect(scanned.includes(Buffer.from("u-canary"))).toBe(true);
    const logText = stack.logs.join("\n");
    expect(logText).toContain("authentication_failed");
    expect(logText).not.toContain(CANARY);
  });
});
