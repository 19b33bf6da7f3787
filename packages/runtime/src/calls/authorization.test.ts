/**
 * The execute path up to the effect: a read that runs, then the authorization steps (the tool, the caller, the
 * input, permission, the provider's authorize).
 */
import { describe, expect, it } from "vitest";
import type { ActivityEvent } from "../api.js";
import {
  ALLOW_ALL,
  ASSISTANT,
  LIMITED,
  NOTES,
  NO_CALL,
  OTHER_TENANT,
  TENANT,
  UNTRUSTED,
  callerManifest,
  eachTestFixture,
  rejection,
  type RuntimeFixture,
} from "../testing/fixtures.js";

const search = { providerId: NOTES, tool: "search-records" };
const create = { providerId: NOTES, tool: "create-record", version: 1 };

let fx: RuntimeFixture;
eachTestFixture((made) => (fx = made));

async function activity(): Promise<readonly ActivityEvent[]> {
  return (await fx.runtime.admin.listActivity(TENANT, { limit: 1000 })).events.filter((event) => event.kind === "call");
}

async function lastEvent(): Promise<ActivityEvent> {
  const events = await activity();
  return events[0]!;
}

describe("a read tool without confirmation", () => {
  it("runs once, answers with a UUIDv7 operation id, and records the settled operation and its event", async () => {
    const principal = await fx.principal();
    const answer = await fx.runtime.execute(principal, search, { query: "plans" });
    expect(answer.result).toEqual({ hits: ["plans"] });
    expect(answer.operationId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(fx.handlers.executed).toHaveLength(1);

    const operation = await fx.runtime.getOperation(principal, answer.operationId);
    expect(operation).toMatchObject({ operationId: answer.operationId, tool: `${NOTES}:search-records@1`, state: "succeeded" });
    expect(operation.settledAt).toBeDefined();

    expect(await lastEvent()).toMatchObject({
      kind: "call",
      phase: "execute",
      outcome: "succeeded",
      tenantId: TENANT,
      actorUserId: "alice",
      callerPluginId: ASSISTANT,
      providerPluginId: NOTES,
      tool: `${NOTES}:search-records@1`,
      version: 1,
      effect: "read",
      operationId: answer.operationId,
    });
  });

  it("hands the provider a frozen copy of the input and a frozen runtime-made context", async () => {
    const principal = await fx.principal(ASSISTANT, { sub: "bob", lvl: 2, roles: ["editor"] });
    const raw = { query: "q", ignored: undefined };
    const answer = await fx.runtime.execute(principal, search, raw);
    const seen = fx.handlers.executed[0]!;
    expect(seen.input).not.toBe(raw);
    expect(seen.input).toEqual({ query: "q" });
    expect(Object.isFrozen(seen.input)).toBe(true);
    expect(Object.isFrozen(seen.ctx)).toBe(true);
    expect(seen.ctx).toMatchObject({
      tenantId: TENANT,
      actor: { userId: "bob", verificationLevel: 2, roles: ["editor"] },
      callerPluginId: ASSISTANT,
      tool: `${NOTES}:search-records@1`,
      effect: "read",
      phase: "execute",
      operationId: answer.operationId,
    });
    expect(seen.ctx.signal).toBeInstanceOf(AbortSignal);
  });

  it("takes actor, tenant and caller from the principal, never from the input", async () => {
    const principal = await fx.principal();
    await fx.runtime.execute(principal, search, { query: "x" }).catch(() => undefined);
    const forged = { query: "x", tenantId: OTHER_TENANT, actor: { userId: "mallory" }, callerPluginId: NOTES };
    const error = await rejection(fx.runtime.execute(principal, search, forged));
    expect(error.code).toBe("INPUT_INVALID");
    expect(fx.handlers.executed.every((call) => call.ctx.tenantId === TENANT && (call.ctx.actor as { userId: string }).userId === "alice")).toBe(true);
  });
});

describe("resolve-tool: the provider for this tenant", () => {
  it("refuses an unknown plugin, one not installed for the tenant, and a disabled one", async () => {
    const principal = await fx.principal();
    expect((await rejection(fx.runtime.execute(principal, { providerId: "com.example.nope", tool: "x" }, {}))).code).toBe("PROVIDER_NOT_FOUND");
    fx.runtime.registerPlugin(callerManifest("com.example.elsewhere"));
    expect((await rejection(fx.runtime.execute(principal, { providerId: "com.example.elsewhere", tool: "x" }, {}))).code).toBe("PROVIDER_NOT_FOUND");
    await fx.runtime.admin.setPluginEnabled(TENANT, NOTES, false);
    const disabled = await rejection(fx.runtime.execute(principal, search, { query: "x" }));
    expect(disabled.code).toBe("PROVIDER_DISABLED");
    expect(fx.handlers.executed).toHaveLength(0);
  });

  it("refuses an undeclared tool, an undeclared version, and a declared tool without handler", async () => {
    const principal = await fx.principal();
    expect((await rejection(fx.runtime.execute(principal, { providerId: NOTES, tool: "drop-table" }, {}))).code).toBe("TOOL_NOT_FOUND");
    expect((await rejection(fx.runtime.execute(principal, { ...create, version: 7 }, { title: "x" }))).code).toBe("VERSION_UNSUPPORTED");
    const missing = await rejection(fx.runtime.execute(principal, { providerId: NOTES, tool: "unprovided" }, { title: "x" }));
    expect(missing.code).toBe("HANDLER_MISSING");
  });

  it("uses the highest declared version when none is named", async () => {
    const principal = await fx.principal();
    const preview = await fx.runtime.preview(principal, { providerId: NOTES, tool: "create-record" }, { title: "x" });
    expect(preview.summary).toBe(`create-record (${NOTES}:create-record@2)`);
  });
});

describe("check-caller: the caller", () => {
  it("refuses a caller that is disabled or not installed for the tenant", async () => {
    const principal = await fx.principal();
    await fx.runtime.admin.setPluginEnabled(TENANT, ASSISTANT, false);
    expect((await rejection(fx.runtime.execute(principal, search, { query: "x" }))).code).toBe("CALLER_DISABLED");
  });

  it("refuses a caller without tools:call and a tool outside the caller's uses", async () => {
    const noCall = await fx.principal(NO_CALL);
    expect((await rejection(fx.runtime.execute(noCall, search, { query: "x" }))).code).toBe("PERMISSION_DENIED");
    const limited = await fx.principal(LIMITED);
    await expect(fx.runtime.execute(limited, search, { query: "x" })).resolves.toMatchObject({ result: { hits: ["x"] } });
    const outside = await rejection(fx.runtime.preview(limited, create, { title: "x" }));
    expect(outside.code).toBe("PERMISSION_DENIED");
    expect(outside.message).toContain('"uses"');
  });

  it("refuses a run id while runs are not available (fail closed)", async () => {
    const principal = await fx.principal();
    expect((await rejection(fx.runtime.execute(principal, search, { query: "x" }, { runId: "run-1" }))).code).toBe("RUN_DENIED");
    expect(fx.handlers.executed).toHaveLength(0);
  });
});

describe("validate-input", () => {
  it("reports every schema issue with its path", async () => {
    const principal = await fx.principal();
    const error = await rejection(fx.runtime.execute(principal, search, { query: 5, extra: true }));
    expect(error.code).toBe("INPUT_INVALID");
    expect((error.data.issues as unknown[]).length).toBeGreaterThanOrEqual(2);
  });

  it("refuses values that are not JSON and inputs beyond the limits", async () => {
    const principal = await fx.principal();
    expect((await rejection(fx.runtime.execute(principal, search, { query: 10n }))).code).toBe("INPUT_INVALID");
    let deep: unknown = { query: "x" };
    for (let i = 0; i < 100; i++) deep = { nested: deep };
    expect((await rejection(fx.runtime.execute(principal, search, deep))).code).toBe("INPUT_INVALID");
    expect((await rejection(fx.runtime.execute(principal, search, { query: "x".repeat(2 * 1024 * 1024) }))).code).toBe("INPUT_INVALID");
    expect(fx.handlers.executed).toHaveLength(0);
  });
});

describe("decide-permission", () => {
  it("denies when no rule matches, and deny wins over allow", async () => {
    await fx.runtime.admin.setPolicy(TENANT, { rules: [{ tools: `${NOTES}:create-record`, decision: "allow" }] });
    const principal = await fx.principal();
    const none = await rejection(fx.runtime.execute(principal, search, { query: "x" }));
    expect(none.code).toBe("PERMISSION_DENIED");
    expect(none.message).toContain("no rule of the tenant policy allows it");

    await fx.runtime.admin.setPolicy(TENANT, {
      rules: [
        { tools: "*", decision: "allow" },
        { tools: `${NOTES}:search-records`, decision: "deny", users: ["alice"] },
      ],
    });
    expect((await rejection(fx.runtime.execute(principal, search, { query: "x" }))).code).toBe("PERMISSION_DENIED");
    const bob = await fx.principal(ASSISTANT, { sub: "bob" });
    await expect(fx.runtime.execute(bob, search, { query: "x" })).resolves.toBeDefined();
  });

  it("matches rules by caller, role and effect", async () => {
    await fx.runtime.admin.setPolicy(TENANT, {
      rules: [{ tools: "*", decision: "allow", callers: [ASSISTANT], roles: ["admin"], effects: ["read"] }],
    });
    const member = await fx.principal(ASSISTANT, { roles: ["member"] });
    const admin = await fx.principal(ASSISTANT, { roles: ["admin"] });
    const otherCaller = await fx.principal(UNTRUSTED, { roles: ["admin"] });
    expect((await rejection(fx.runtime.execute(member, search, { query: "x" }))).code).toBe("PERMISSION_DENIED");
    await expect(fx.runtime.execute(admin, search, { query: "x" })).resolves.toBeDefined();
    expect((await rejection(fx.runtime.execute(otherCaller, search, { query: "x" }))).code).toBe("PERMISSION_DENIED");
    expect((await rejection(fx.runtime.preview(admin, create, { title: "x" }))).code).toBe("PERMISSION_DENIED");
  });

  it("checks the verification level of the tool and of matching rules", async () => {
    const level1 = await fx.principal(ASSISTANT, { lvl: 1 });
    const level2 = await fx.principal(ASSISTANT, { lvl: 2 });
    const verified = { providerId: NOTES, tool: "verified-read" };
    expect((await rejection(fx.runtime.execute(level1, verified, { title: "x" }))).code).toBe("VERIFICATION_REQUIRED");
    await expect(fx.runtime.execute(level2, verified, { title: "x" })).resolves.toBeDefined();

    await fx.runtime.admin.setPolicy(TENANT, { rules: [{ tools: "*", decision: "allow", minVerificationLevel: 3 }] });
    expect((await rejection(fx.runtime.execute(level2, search, { query: "x" }))).code).toBe("VERIFICATION_REQUIRED");
  });

  it("never lets a rule remove the confirmation a tool declares, and lets a confirm rule add one", async () => {
    const principal = await fx.principal();
    expect((await rejection(fx.runtime.execute(principal, create, { title: "x" }))).code).toBe("CONFIRMATION_REQUIRED");
    await fx.runtime.admin.setPolicy(TENANT, {
      rules: [
        { tools: "*", decision: "allow" },
        { tools: `${NOTES}:search-records`, decision: "confirm" },
      ],
      trustedConfirmationUis: [ASSISTANT],
    });
    expect((await rejection(fx.runtime.execute(principal, search, { query: "x" }))).code).toBe("CONFIRMATION_REQUIRED");
    const preview = await fx.runtime.preview(principal, search, { query: "x" });
    expect(preview.confirmation).toMatchObject({ required: true, mode: "token" });
    expect(fx.handlers.executed).toHaveLength(0);
  });

  it("gives a caller that is not a trusted confirmation UI platform mode, even when a rule asks for token mode", async () => {
    await fx.runtime.admin.setPolicy(TENANT, {
      rules: [{ tools: "*", decision: "allow", mode: "token" }],
      trustedConfirmationUis: [ASSISTANT],
    });
    const untrusted = await fx.principal(UNTRUSTED);
    const preview = await fx.runtime.preview(untrusted, create, { title: "x" });
    expect(preview.confirmation).toMatchObject({ required: true, mode: "platform" });
    expect(preview.confirmation).not.toHaveProperty("token");
    // a trusted caller gets platform mode too once any matching rule demands it
    await fx.runtime.admin.setPolicy(TENANT, {
      rules: [{ tools: "*", decision: "allow", mode: "platform" }],
      trustedConfirmationUis: [ASSISTANT],
    });
    const trusted = await fx.principal(ASSISTANT);
    expect((await fx.runtime.preview(trusted, create, { title: "x" })).confirmation).toMatchObject({ mode: "platform" });
    await expect(fx.runtime.execute(untrusted, search, { query: "x" })).resolves.toBeDefined();
  });

  it("never runs an effect under a config another instance changed, and refreshes previews within the window", async () => {
    const principal = await fx.principal();
    const write = { providerId: NOTES, tool: "create-record", version: 1 };
    const token = async () => ((await fx.runtime.preview(principal, write, { title: "t" })).confirmation as { token: string }).token;
    await expect(fx.runtime.execute(principal, write, { title: "t" }, { confirmationToken: await token() })).resolves.toBeDefined();
    await expect(fx.runtime.preview(principal, search, { query: "x" })).resolves.toBeDefined();
    const confirmed = await token();
    const other = await fx.reopen();
    await other.admin.setPolicy(TENANT, { rules: [] });
    // the execute's begin transaction sees the new version, and the call is decided again
    expect((await rejection(fx.runtime.execute(principal, write, { title: "t" }, { confirmationToken: confirmed }))).code).toBe("PERMISSION_DENIED");
    expect(fx.handlers.executed).toHaveLength(1);
    await other.admin.setPolicy(TENANT, ALLOW_ALL);
    fx.advance(1_001);
    await expect(fx.runtime.preview(principal, search, { query: "x" })).resolves.toBeDefined();
    await other.admin.setPluginEnabled(TENANT, NOTES, false);
    fx.advance(1_001);
    expect((await rejection(fx.runtime.preview(principal, search, { query: "x" }))).code).toBe("PROVIDER_DISABLED");
  });

  it("hands out no read's result decided under a config another instance changed", async () => {
    const principal = await fx.principal();
    await expect(fx.runtime.execute(principal, search, { query: "x" })).resolves.toBeDefined();
    const other = await fx.reopen();
    await other.admin.setPolicy(TENANT, { rules: [] });
    // a read runs first and is recorded after: its record sees the new version, the result is dropped and the call decided again
    expect((await rejection(fx.runtime.execute(principal, search, { query: "x" }))).code).toBe("PERMISSION_DENIED");
    expect(fx.handlers.executed).toHaveLength(2);
    const reads = (await fx.runtime.admin.listActivity(TENANT)).events.filter((event) => event.tool === `${NOTES}:search-records@1`);
    expect(reads.map((event) => event.outcome)).toEqual(["denied", "succeeded"]);
  });
});

describe("provider-authorize", () => {
  it("denies when authorize says no, and fails closed when it throws", async () => {
    const principal = await fx.principal();
    const guarded = { providerId: NOTES, tool: "guarded-read" };
    fx.handlers.authorizeAnswer = false;
    expect((await rejection(fx.runtime.execute(principal, guarded, { title: "x" }))).code).toBe("PERMISSION_DENIED");
    fx.handlers.authorizeAnswer = undefined as unknown as boolean;
    expect((await rejection(fx.runtime.execute(principal, guarded, { title: "x" }))).code).toBe("PERMISSION_DENIED");
    fx.handlers.authorizeAnswer = true;
    await expect(fx.runtime.execute(principal, guarded, { title: "x" })).resolves.toBeDefined();
    expect(fx.handlers.executed).toHaveLength(1);
  });
});
