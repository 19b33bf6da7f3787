import { randomBytes, randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import { readFileSync } from "node:fs";
import { SignJWT, decodeJwt } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ConfirmationStatus } from "@toolpact/contract";
import type { ActivityEvent, Principal } from "../api.js";
import {
  ALLOW_ALL,
  ASSISTANT,
  ISSUER,
  NOTES,
  OTHER_TENANT,
  TENANT,
  UNTRUSTED,
  configureTenant,
  createFixture,
  rejection,
  type FixtureOptions,
  type RuntimeFixture,
} from "../testing/fixtures.js";

const PUBLIC_URL = "https://toolpact.example.test/base";
const create = { providerId: NOTES, tool: "create-record", version: 1 };
const search = { providerId: NOTES, tool: "search-records" };

let fx: RuntimeFixture;
let caller: Principal;
const alice = { tenantId: TENANT, userId: "alice" };

async function setup(options: FixtureOptions = {}): Promise<void> {
  fx = await createFixture({ ...options, runtime: { publicUrl: PUBLIC_URL, ...options.runtime } });
  caller = await fx.principal(UNTRUSTED);
}
afterEach(async () => {
  await fx?.dispose();
});

/** A platform-mode preview of create-record by the untrusted caller; returns its request id. */
async function ask(principal: Principal = caller, title = "Q3 plan"): Promise<string> {
  const preview = await fx.runtime.preview(principal, create, { title });
  if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
  return preview.confirmation.requestId;
}

async function events(kind: ActivityEvent["kind"]): Promise<readonly ActivityEvent[]> {
  return (await fx.runtime.admin.listActivity(TENANT, { limit: 1000 })).events.filter((event) => event.kind === kind);
}

function presenceToken(claims: Record<string, unknown> = {}, options: { ttl?: number; secret?: Uint8Array; audience?: string } = {}) {
  const iat = Math.floor(fx.now() / 1000);
  const body: Record<string, unknown> = { sub: "alice", tid: TENANT, jti: randomUUID(), ...claims };
  for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
  return new SignJWT(body)
    .setProtectedHeader({ alg: "HS256" })
    .setIssuer(ISSUER)
    .setAudience(options.audience ?? "toolpact-presence")
    .setIssuedAt(iat)
    .setExpirationTime(iat + (options.ttl ?? 120))
    .sign(options.secret ?? fx.actorSecret);
}

describe("platform-mode preview", () => {
  beforeEach(() => setup());

  it("keeps a request with a sealed preview and answers requestId, confirmUrl and expiry, never a token", async () => {
    const preview = await fx.runtime.preview(caller, create, { title: "Secret plan" });
    expect(preview.summary).toBe('Create "Secret plan"');
    expect(preview.confirmation).toMatchObject({ required: true, mode: "platform" });
    const info = preview.confirmation as { requestId: string; confirmUrl: string; expiresAt: string };
    expect(info.confirmUrl).toBe(`${PUBLIC_URL}/confirm/${info.requestId}`);
    expect(Date.parse(info.expiresAt) - fx.now()).toBeGreaterThan(290_000);
    expect(JSON.stringify(preview)).not.toMatch(/ey[A-Za-z0-9_-]+\.ey/);
    expect(await fx.runtime.getConfirmation(caller, info.requestId)).toEqual({ status: "pending", expiresAt: info.expiresAt });
    expect((await events("call"))[0]).toMatchObject({ phase: "preview", outcome: "previewed", confirmationId: info.requestId });
    // the preview's details are sealed at rest
    await fx.runtime.close();
    for (const file of ["toolpact.db", "toolpact.db-wal"]) {
      let bytes = "";
      try {
        bytes = readFileSync(`${fx.dir}/${file}`).toString("latin1");
      } catch {
        continue;
      }
      expect(bytes).not.toContain("Secret plan");
    }
  });

  it("execute needs the approved token: without one it is CONFIRMATION_REQUIRED", async () => {
    await ask();
    expect((await rejection(fx.runtime.execute(caller, create, { title: "Q3 plan" }))).code).toBe("CONFIRMATION_REQUIRED");
  });
});

describe("the confirmation page's person", () => {
  beforeEach(() => setup());

  it("sees the request for them: tool, title, effect, summary, details, who asks", async () => {
    const requestId = await ask();
    const view = await fx.runtime.describeConfirmation(alice, requestId);
    expect(view).toMatchObject({
      requestId,
      tool: `${NOTES}:create-record@1`,
      title: "Create record",
      effect: "write",
      summary: 'Create "Q3 plan"',
      details: { title: "Q3 plan" },
      callerPluginId: UNTRUSTED,
      status: "pending",
    });
  });

  it("is never asked to approve blind: a tool without a preview of its own shows its validated input", async () => {
    // create-record@2 requires confirmation (a write) and has no preview handler
    const input = { title: "Wire $9,000 to acct 4417", tags: ["urgent", "finance"] };
    const preview = await fx.runtime.preview(caller, { providerId: NOTES, tool: "create-record", version: 2 }, input);
    expect(preview).toMatchObject({ summary: `create-record (${NOTES}:create-record@2)`, details: input, confirmation: { mode: "platform" } });
    const requestId = (preview.confirmation as { requestId: string }).requestId;
    expect(await fx.runtime.describeConfirmation(alice, requestId)).toMatchObject({ status: "pending", details: input });
    // sealed at rest like any preview's details
    const db = new Database(fx.dbPath, { readonly: true });
    const sealed = db.prepare("SELECT sealed_preview FROM confirmation_requests WHERE request_id = ?").pluck().get(requestId) as Buffer;
    db.close();
    expect(sealed.toString("latin1")).not.toContain("4417");
    // token mode (a trusted UI) gets the same details; a tool that needs no confirmation still shows none
    const trusted = await fx.principal(ASSISTANT);
    expect((await fx.runtime.preview(trusted, { providerId: NOTES, tool: "create-record", version: 2 }, input)).details).toEqual(input);
    expect((await fx.runtime.preview(trusted, search, { query: "x" })).details).toBeNull();
  });

  it("only the actor the request is for sees or decides it; nobody learns whether other ids exist", async () => {
    const requestId = await ask();
    const bob = { tenantId: TENANT, userId: "bob" };
    const elsewhere = { tenantId: OTHER_TENANT, userId: "alice" };
    for (const person of [bob, elsewhere]) {
      const seen = await rejection(fx.runtime.describeConfirmation(person, requestId));
      const decided = await rejection(fx.runtime.decideConfirmation(person, requestId, "approve"));
      const unknown = await rejection(fx.runtime.describeConfirmation(person, "no-such-request"));
      expect([seen.code, decided.code, unknown.code]).toEqual(["PERMISSION_DENIED", "PERMISSION_DENIED", "PERMISSION_DENIED"]);
      expect(seen.message.replace(requestId, "ID")).toBe(unknown.message.replace("no-such-request", "ID"));
    }
    expect((await fx.runtime.getConfirmation(caller, requestId)).status).toBe("pending");
  });

  it("approve: the caller's wait answers at once with a platform-mode token, execute succeeds once", async () => {
    const requestId = await ask();
    const started = performance.now();
    const waiting = fx.runtime.waitConfirmation(caller, requestId, { timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(await fx.runtime.decideConfirmation(alice, requestId, "approve")).toEqual({ requestId, status: "approved" });
    const status = await waiting;
    expect(performance.now() - started).toBeLessThan(1000);
    expect(status.status).toBe("approved");
    const token = (status as Extract<ConfirmationStatus, { status: "approved" }>).token;
    expect(decodeJwt(token)).toMatchObject({ jti: requestId, mod: "platform", cpl: UNTRUSTED, sub: "alice", tol: "create-record" });
    // fetching again gives the same token: one approval, one use
    expect(await fx.runtime.getConfirmation(caller, requestId)).toEqual(status);

    const answer = await fx.runtime.execute(caller, create, { title: "Q3 plan" }, { confirmationToken: token });
    expect(answer.result).toMatchObject({ id: expect.any(String) });
    expect((await rejection(fx.runtime.execute(caller, create, { title: "Q3 plan" }, { confirmationToken: token }))).code).toBe("CONFIRMATION_USED");
    // the approval covers exactly the previewed input
    const other = await ask(caller, "Other");
    await fx.runtime.decideConfirmation(alice, other, "approve");
    const otherToken = ((await fx.runtime.getConfirmation(caller, other)) as { token: string }).token;
    expect((await rejection(fx.runtime.execute(caller, create, { title: "Changed" }, { confirmationToken: otherToken }))).code).toBe("CONFIRMATION_MISMATCH");
    expect((await events("confirmation")).filter((e) => e.phase === "approve")).toHaveLength(2);
    expect((await events("confirmation")).find((e) => e.confirmationId === requestId)).toMatchObject({
      phase: "approve",
      outcome: "approved",
      actorUserId: "alice",
      callerPluginId: UNTRUSTED,
      tool: `${NOTES}:create-record@1`,
    });
    // after the decision the sealed preview is gone
    expect(await fx.runtime.describeConfirmation(alice, requestId)).toMatchObject({ status: "approved", summary: "", details: null });
  });

  it("deny: the caller learns denied, gets no token, the decision is final and logged", async () => {
    const requestId = await ask();
    expect(await fx.runtime.decideConfirmation(alice, requestId, "deny")).toEqual({ requestId, status: "denied" });
    expect(await fx.runtime.waitConfirmation(caller, requestId, { timeoutMs: 5000 })).toEqual({ status: "denied" });
    expect((await rejection(fx.runtime.decideConfirmation(alice, requestId, "approve"))).code).toBe("CONFIRMATION_USED");
    expect((await events("confirmation"))[0]).toMatchObject({ phase: "deny", outcome: "denied", confirmationId: requestId });
  });

  it("cannot decide after expiry; the expiry is logged once", async () => {
    const requestId = await ask();
    fx.advance(301_000);
    expect((await rejection(fx.runtime.decideConfirmation(alice, requestId, "approve"))).code).toBe("CONFIRMATION_EXPIRED");
    expect(await fx.runtime.getConfirmation(caller, requestId)).toEqual({ status: "expired" });
    expect((await fx.runtime.describeConfirmation(alice, requestId)).status).toBe("expired");
    const expired = (await events("confirmation")).filter((e) => e.phase === "expire");
    expect(expired).toHaveLength(1);
    expect(expired[0]).toMatchObject({ outcome: "expired", confirmationId: requestId });
  });

  it("the periodic sweep logs requests that expired with nobody looking", async () => {
    await fx.dispose();
    await setup({ runtime: { recoveryIntervalMs: 50 } });
    const requestId = await ask();
    fx.advance(301_000);
    const deadline = Date.now() + 5000;
    while ((await events("confirmation")).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect((await events("confirmation"))[0]).toMatchObject({ phase: "expire", outcome: "expired", confirmationId: requestId });
  });
});

describe("the caller", () => {
  beforeEach(() => setup());

  it("waits at most as long as asked (or until aborted), then hears pending", async () => {
    const requestId = await ask();
    const started = performance.now();
    const status = await fx.runtime.waitConfirmation(caller, requestId, { timeoutMs: 300 });
    const took = performance.now() - started;
    expect(status.status).toBe("pending");
    expect(took).toBeGreaterThanOrEqual(280);
    expect(took).toBeLessThan(1500);
    const controller = new AbortController();
    const aborted = fx.runtime.waitConfirmation(caller, requestId, { timeoutMs: 25_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect((await aborted).status).toBe("pending");
    expect((await rejection(fx.runtime.waitConfirmation(caller, requestId, { timeoutMs: -1 }))).code).toBe("INPUT_INVALID");
  });

  it("hears a decision made on another instance", async () => {
    const requestId = await ask();
    const other = await fx.reopen();
    const waiting = fx.runtime.waitConfirmation(caller, requestId, { timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = performance.now();
    await other.decideConfirmation(alice, requestId, "approve");
    expect((await waiting).status).toBe("approved");
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("only the caller and actor a request was made for read, wait for or cancel it", async () => {
    const requestId = await ask();
    const otherCaller = await fx.principal(ASSISTANT);
    const otherActor = await fx.principal(UNTRUSTED, { sub: "bob" });
    for (const principal of [otherCaller, otherActor]) {
      expect((await rejection(fx.runtime.getConfirmation(principal, requestId))).code).toBe("PERMISSION_DENIED");
      expect((await rejection(fx.runtime.waitConfirmation(principal, requestId, { timeoutMs: 10 }))).code).toBe("PERMISSION_DENIED");
      expect((await rejection(fx.runtime.cancelConfirmation(principal, requestId))).code).toBe("PERMISSION_DENIED");
    }
    await fx.runtime.decideConfirmation(alice, requestId, "approve");
    expect((await rejection(fx.runtime.getConfirmation(otherCaller, requestId))).code).toBe("PERMISSION_DENIED");
  });

  it("cancels a pending request: the person can no longer approve it", async () => {
    const requestId = await ask();
    const waiting = fx.runtime.waitConfirmation(caller, requestId, { timeoutMs: 10_000 });
    await fx.runtime.cancelConfirmation(caller, requestId);
    expect(await waiting).toEqual({ status: "cancelled" });
    expect((await rejection(fx.runtime.decideConfirmation(alice, requestId, "approve"))).code).toBe("CONFIRMATION_DENIED");
    await fx.runtime.cancelConfirmation(caller, requestId);
    expect((await events("confirmation"))[0]).toMatchObject({ phase: "cancel", outcome: "denied", confirmationId: requestId });
  });
});

describe("modes and policy", () => {
  beforeEach(() => setup());

  it("refuses a token-mode token where policy now demands platform mode", async () => {
    const trusted = await fx.principal(ASSISTANT);
    const preview = await fx.runtime.preview(trusted, create, { title: "x" });
    expect(preview.confirmation).toMatchObject({ mode: "token" });
    const token = (preview.confirmation as { token: string }).token;
    await fx.runtime.admin.setPolicy(TENANT, { ...ALLOW_ALL, rules: [{ tools: "*", decision: "allow", mode: "platform" }] });
    const error = await rejection(fx.runtime.execute(trusted, create, { title: "x" }, { confirmationToken: token }));
    expect(error.code).toBe("CONFIRMATION_MISMATCH");
    expect(error.message).toContain("platform mode");
    // the refused token was not consumed, and nothing ran
    expect(fx.handlers.executed).toHaveLength(0);
  });

  it("accepts a platform-approved token where policy allows token mode (stronger, not weaker)", async () => {
    await fx.runtime.admin.setPolicy(TENANT, { rules: [{ tools: "*", decision: "allow", mode: "platform" }], trustedConfirmationUis: [ASSISTANT] });
    const trusted = await fx.principal(ASSISTANT);
    const requestId = await ask(trusted);
    await fx.runtime.decideConfirmation(alice, requestId, "approve");
    const token = ((await fx.runtime.getConfirmation(trusted, requestId)) as { token: string }).token;
    await fx.runtime.admin.setPolicy(TENANT, ALLOW_ALL);
    await expect(fx.runtime.execute(trusted, create, { title: "Q3 plan" }, { confirmationToken: token })).resolves.toBeDefined();
  });

  it("a rule never removes a confirmation the tool declares", async () => {
    await fx.runtime.admin.setPolicy(TENANT, { rules: [{ tools: `${NOTES}:create-record`, decision: "allow" }] });
    expect((await rejection(fx.runtime.execute(caller, create, { title: "x" }))).code).toBe("CONFIRMATION_REQUIRED");
    expect((await fx.runtime.preview(caller, create, { title: "x" })).confirmation.required).toBe(true);
  });
});

describe("rate limits", () => {
  it("limits previews per caller and actor, with retryAfterMs", async () => {
    await setup({ runtime: { rateLimits: { previewsPerMinute: 3 } } });
    for (let i = 0; i < 3; i++) await fx.runtime.preview(caller, search, { query: "x" });
    const limited = await rejection(fx.runtime.preview(caller, search, { query: "x" }));
    expect(limited.code).toBe("RATE_LIMITED");
    expect(limited.data.retryAfterMs).toBeGreaterThan(0);
    expect(limited.data.retryAfterMs).toBeLessThanOrEqual(60_000);
    expect((await events("call"))[0]).toMatchObject({ phase: "preview", outcome: "denied", errorCode: "RATE_LIMITED" });
    // another actor and another caller have their own budget
    await expect(fx.runtime.preview(await fx.principal(UNTRUSTED, { sub: "bob" }), search, { query: "x" })).resolves.toBeDefined();
    await expect(fx.runtime.preview(await fx.principal(ASSISTANT), search, { query: "x" })).resolves.toBeDefined();
    fx.advance(61_000);
    await expect(fx.runtime.preview(caller, search, { query: "x" })).resolves.toBeDefined();
  });

  it("limits pending confirmation requests per caller and actor", async () => {
    await setup({ runtime: { rateLimits: { pendingConfirmations: 2 } } });
    const first = await ask(caller, "first");
    await ask(caller, "second");
    const limited = await rejection(fx.runtime.preview(caller, create, { title: "third" }));
    expect(limited.code).toBe("RATE_LIMITED");
    expect(limited.data.retryAfterMs).toBeGreaterThan(290_000);
    await fx.runtime.cancelConfirmation(caller, first);
    await expect(ask(caller, "third")).resolves.toEqual(expect.any(String));
  });
});

describe("presence tokens", () => {
  beforeEach(() => setup());

  it("sign in the person they name", async () => {
    const identity = await fx.runtime.verifyPresenceToken(await presenceToken());
    expect(identity).toMatchObject({ tenantId: TENANT, userId: "alice" });
    expect(identity.expiresAt).toBeGreaterThan(fx.now());
  });

  it("refuse actor tokens, long-lived, expired, forged or incomplete tokens", async () => {
    const refused = [
      await fx.actorToken(),
      await presenceToken({}, { audience: "toolpact" }),
      await presenceToken({}, { ttl: 601 }),
      await presenceToken({}, { ttl: -10 }),
      await presenceToken({}, { secret: new Uint8Array(randomBytes(32)) }),
      await presenceToken({ tid: undefined }),
      "not-a-jwt",
    ];
    for (const token of refused) {
      expect((await rejection(fx.runtime.verifyPresenceToken(token))).code).toBe("UNAUTHENTICATED");
    }
    expect(fx.runtime.metrics.authFailures).toBeGreaterThanOrEqual(refused.length);
  });

  it("cannot be used as actor tokens", async () => {
    const key = (await fx.runtime.admin.issuePluginKey(TENANT, UNTRUSTED)).key;
    const error = await rejection(fx.runtime.authenticate({ pluginKey: key, actorToken: await presenceToken() }));
    expect(error.code).toBe("UNAUTHENTICATED");
  });
});

describe("tenancy", () => {
  beforeEach(() => setup());

  it("keeps requests in their tenant", async () => {
    await configureTenant(fx.runtime, OTHER_TENANT);
    const requestId = await ask();
    const intruder = await fx.principal(UNTRUSTED, { tid: OTHER_TENANT });
    expect((await rejection(fx.runtime.getConfirmation(intruder, requestId))).code).toBe("PERMISSION_DENIED");
  });
});
