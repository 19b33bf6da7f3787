/**
 * Platform confirmation over HTTP: a real server on 127.0.0.1:0 and a real SQLite file. Callers
 * preview in platform mode and wait; the person decides on the confirmation page with a session made
 * from a presence token. Every rule is a test that tries to break it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ASSISTANT_ID, OTHER_CALLER_ID, PROVIDER_ID } from "./support/plugins.js";
import {
  callerHeadersOf,
  configureWorld,
  type CallerHeaders,
  type Tenant,
  makeSecrets,
  startStack,
  TEST_POLICY,
  type Stack,
  type WorldKeys,
} from "./support/stack.js";
import { fetchPage, postDecision, signIn, type PageSession } from "./support/confirm-page.js";
import { decodeJws, mintActorToken, mintPresenceToken } from "./support/tokens.js";
import { mutate, ok, query, type WireResponse } from "./support/wire.js";

let dir: string;
let stack: Stack;
let keys: WorldKeys;
let as: CallerHeaders;
const secrets = makeSecrets();
/** Moves the runtime's clock (ms); the server's session clock stays real. */
let clockOffset = 0;

/** Writes need platform confirmation; reads are allowed. */
const PLATFORM_POLICY = {
  rules: [
    { tools: "com.test.*", effects: ["read"], decision: "allow" },
    { tools: "com.test.*", effects: ["write", "external"], decision: "confirm", mode: "platform" },
  ],
} as const;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-confirm-"));
  stack = await startStack({ dbFile: path.join(dir, "toolpact.db"), secrets, clock: () => Date.now() + clockOffset });
  keys = await configureWorld(stack);
  as = callerHeadersOf(keys, secrets.actorSecret);
});

beforeEach(async () => {
  clockOffset = 0;
  for (const tenantId of ["t1", "t2"]) await stack.admin("setPolicy", { tenantId, policy: PLATFORM_POLICY });
});

afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const createNote = { providerId: PROVIDER_ID, tool: "create-note" };

interface PlatformPreview {
  summary: string;
  confirmation: { required: true; mode: "platform"; requestId: string; confirmUrl: string; expiresAt: string };
}

/** A platform-mode preview of create-note by `headers`' caller and actor. */
/** Previews so far: each default input is new, since the same call previewed again gets its open request back. */
let previews = 0;

async function platformPreview(headers: Record<string, string>, input: unknown = { title: `Q3 plan #${++previews}` }, extra: Record<string, unknown> = {}) {
  const answer = ok<PlatformPreview>(await mutate(stack.url, "tools.preview", { ref: createNote, input, ...extra }, headers));
  expect(answer.confirmation).toMatchObject({ required: true, mode: "platform" });
  return answer.confirmation;
}

function codeOf(response: WireResponse): unknown {
  return response.body.error?.data.toolpactCode;
}

function expectRefused(response: WireResponse, code: string, status: number): void {
  expect(response.body.error, JSON.stringify(response.body)).toBeDefined();
  expect(codeOf(response)).toBe(code);
  expect(response.status).toBe(status);
}

/** tRPC approve/deny as a page's script would send it: the session cookie and the CSRF header. */
function decideOverTrpc(decision: "approve" | "deny", requestId: string, headers: Record<string, string>) {
  return mutate(stack.url, `confirmations.${decision}`, { requestId }, headers);
}

function sessionHeaders(session: PageSession, csrf: string | undefined): Record<string, string> {
  return { cookie: session.cookie, ...(csrf === undefined ? {} : { "x-toolpact-csrf": csrf }) };
}

async function statusOf(headers: Record<string, string>, requestId: string): Promise<{ status: string; token?: string }> {
  return ok(await query(stack.url, "confirmations.get", { requestId }, headers));
}

describe("platform-mode preview", () => {
  it("answers a request id and a confirmUrl under publicUrl, and the caller sees it pending", async () => {
    const headers = await as(ASSISTANT_ID);
    const confirmation = await platformPreview(headers);
    expect(confirmation.confirmUrl).toBe(`https://toolpact.test.example/confirm/${confirmation.requestId}`);
    expect(await statusOf(headers, confirmation.requestId)).toMatchObject({ status: "pending" });
    // Another caller, or the same caller for another actor, learns nothing about it.
    expect(codeOf(await query(stack.url, "confirmations.get", { requestId: confirmation.requestId }, await as(OTHER_CALLER_ID)))).toBeDefined();
    expect(codeOf(await query(stack.url, "confirmations.get", { requestId: confirmation.requestId }, await as(ASSISTANT_ID, { sub: "user-2" })))).toBeDefined();
  });
});

describe("the confirmation page", () => {
  it("sends its security headers, and frame-ancestors 'none' on every answer", async () => {
    const { requestId } = await platformPreview(await as(ASSISTANT_ID));
    const session = await signIn(stack.url, secrets.actorSecret);
    for (const page of [await fetchPage(stack.url, requestId, session), await fetchPage(stack.url, requestId)]) {
      expect(page.headers.get("content-security-policy")).toBe("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
      expect(page.headers.get("x-frame-options")).toBe("DENY");
      expect(page.headers.get("referrer-policy")).toBe("same-origin");
      expect(page.headers.get("cache-control")).toBe("no-store");
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    }
  });

  it("shows the request to the person it is for: title, tool, effect, summary, details, who asks, expiry, two buttons", async () => {
    const { requestId, expiresAt } = await platformPreview(await as(ASSISTANT_ID), { title: "<b>bold</b> plan" });
    const page = await fetchPage(stack.url, requestId, await signIn(stack.url, secrets.actorSecret));
    expect(page.status).toBe(200);
    expect(page.html).toContain("Create note");
    expect(page.html).toContain(`${PROVIDER_ID}:create-note@1`);
    expect(page.html).toContain(">write<");
    expect(page.html).toContain("Create note &quot;&lt;b&gt;bold&lt;/b&gt; plan&quot;");
    expect(page.html).not.toContain("<b>bold</b>");
    expect(page.html).toContain(ASSISTANT_ID);
    expect(page.html).toContain(expiresAt);
    expect(page.html).toContain('id="approve"');
    expect(page.html).toContain('id="deny"');
    expect(page.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("without a session answers 401 with how to get one", async () => {
    const { requestId } = await platformPreview(await as(ASSISTANT_ID));
    const page = await fetchPage(stack.url, requestId);
    expect(page.status).toBe(401);
    expect(page.html).toContain("/confirm/session");
    expect(page.html).not.toContain("Create note &quot;");
  });

  it("answers 403 to another user's session and 403 to the same user id of another tenant", async () => {
    const { requestId } = await platformPreview(await as(ASSISTANT_ID));
    const other = await fetchPage(stack.url, requestId, await signIn(stack.url, secrets.actorSecret, { sub: "user-2" }));
    expect(other.status).toBe(403);
    expect(other.html).not.toContain("Q3 plan");
    const otherTenant = await fetchPage(stack.url, requestId, await signIn(stack.url, secrets.actorSecret, { tid: "t2" }));
    expect(otherTenant.status).toBe(403);
    expect(otherTenant.html).not.toContain("Q3 plan");
  });
});

describe("/confirm/session", () => {
  it("sets an HttpOnly, SameSite=Strict, Secure cookie for /confirm and leads on to the request named by next", async () => {
    const { requestId } = await platformPreview(await as(ASSISTANT_ID));
    const token = await mintPresenceToken(secrets.actorSecret);
    const response = await fetch(`${stack.url}/confirm/session?token=${token}&next=${encodeURIComponent(`/confirm/${requestId}`)}`, {
      redirect: "manual",
    });
    // A page that refreshes itself, not a redirect: a redirect chain started on the identity service's
    // site would not carry the SameSite=Strict cookie (the browser test goes that way).
    expect(response.status).toBe(200);
    expect(response.headers.get("location")).toBeNull();
    const html = await response.text();
    expect(html).toContain(`<meta http-equiv="refresh" content="0;url=${requestId}">`);
    expect(html).toContain(`<a id="continue" href="${requestId}">`);
    const cookie = response.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^__Secure-toolpact-confirm=[^;]+; Path=\/confirm; Max-Age=\d+; HttpOnly; SameSite=Strict; Secure$/);
    expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  });

  it("also accepts the token as a POSTed form field", async () => {
    const token = await mintPresenceToken(secrets.actorSecret);
    const response = await fetch(`${stack.url}/confirm/session`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token }).toString(),
      redirect: "manual",
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("set-cookie")).toMatch(/HttpOnly; SameSite=Strict/);
  });

  it("never redirects anywhere but a confirmation request", async () => {
    for (const next of ["//evil.example/confirm/abc", "https://evil.example/confirm/abc", "/\\evil.example", "/trpc/tools.list", "javascript:alert(1)"]) {
      const token = await mintPresenceToken(secrets.actorSecret);
      const response = await fetch(`${stack.url}/confirm/session?token=${token}&next=${encodeURIComponent(next)}`, { redirect: "manual" });
      expect(response.status, next).toBe(200);
      expect(response.headers.get("location")).toBeNull();
      const html = await response.text();
      expect(html, next).not.toContain("http-equiv");
      expect(html, next).not.toContain('id="continue"');
    }
  });

  it("refuses an actor token, a forged, expired or foreign-issuer presence token, and sets no cookie", async () => {
    const candidates = [
      await mintActorToken(secrets.actorSecret),
      await mintPresenceToken(secrets.actorSecret, { secret: makeSecrets().actorSecret }),
      await mintPresenceToken(secrets.actorSecret, { expiresIn: -60 }),
      await mintPresenceToken(secrets.actorSecret, { iss: "https://evil.example" }),
      "not-a-token",
    ];
    for (const token of candidates) {
      const response = await fetch(`${stack.url}/confirm/session?token=${encodeURIComponent(token)}`, { redirect: "manual" });
      expect(response.status).toBe(401);
      expect(response.headers.get("set-cookie")).toBeNull();
    }
    expect((await fetch(`${stack.url}/confirm/session`)).status).toBe(401);
  });

  it("refuses a request that carries a plugin key or an actor token", async () => {
    const token = await mintPresenceToken(secrets.actorSecret);
    const response = await fetch(`${stack.url}/confirm/session?token=${token}`, { headers: await as(ASSISTANT_ID) });
    expect(response.status).toBe(403);
    expect(response.headers.get("set-cookie")).toBeNull();
  });

  it("a tampered session cookie is no session", async () => {
    const { requestId } = await platformPreview(await as(ASSISTANT_ID));
    const session = await signIn(stack.url, secrets.actorSecret);
    const [name, value] = session.cookie.split("=") as [string, string];
    const [payload, mac] = value.split(".") as [string, string];
    const fields = JSON.parse(Buffer.from(payload, "base64url").toString()) as unknown[];
    const forgedPayload = Buffer.from(JSON.stringify([fields[0], "user-2", fields[2], fields[3]])).toString("base64url");
    const page = await fetchPage(stack.url, requestId, { cookie: `${name}=${forgedPayload}.${mac}`, setCookie: "" });
    expect(page.status).toBe(401);
  });
});

describe("approve and deny", () => {
  it("the caller cannot approve its own request with its plugin key and actor token", async () => {
    const headers = await as(ASSISTANT_ID);
    const { requestId } = await platformPreview(headers);
    expectRefused(await decideOverTrpc("approve", requestId, headers), "PERMISSION_DENIED", 403);
    // Not with the actor token alone, nor the plugin key alone.
    expectRefused(await decideOverTrpc("approve", requestId, { "x-toolpact-actor": headers["x-toolpact-actor"]! }), "PERMISSION_DENIED", 403);
    expectRefused(await decideOverTrpc("approve", requestId, { authorization: headers.authorization! }), "PERMISSION_DENIED", 403);
    expect(await statusOf(headers, requestId)).toMatchObject({ status: "pending" });
  });

  it("refuses a request carrying caller credentials even next to the actor's own valid session and CSRF token", async () => {
    const headers = await as(ASSISTANT_ID);
    const { requestId } = await platformPreview(headers);
    const session = await signIn(stack.url, secrets.actorSecret);
    const { csrf } = await fetchPage(stack.url, requestId, session);
    expectRefused(await decideOverTrpc("approve", requestId, { ...sessionHeaders(session, csrf), ...headers }), "PERMISSION_DENIED", 403);
    expectRefused(
      await decideOverTrpc("approve", requestId, { ...sessionHeaders(session, csrf), "x-toolpact-actor": headers["x-toolpact-actor"]! }),
      "PERMISSION_DENIED",
      403,
    );
    expectRefused(
      await decideOverTrpc("approve", requestId, { ...sessionHeaders(session, csrf), authorization: headers.authorization! }),
      "PERMISSION_DENIED",
      403,
    );
    const form = await postDecision(stack.url, requestId, "approve", { session, csrf: csrf!, headers: { authorization: headers.authorization! } });
    expect(form.status).toBe(403);
    expect(await statusOf(headers, requestId)).toMatchObject({ status: "pending" });
  });

  it("refuses approve without the CSRF token, with another session's token, and from another site", async () => {
    const headers = await as(ASSISTANT_ID);
    const { requestId } = await platformPreview(headers);
    const session = await signIn(stack.url, secrets.actorSecret);
    const second = await signIn(stack.url, secrets.actorSecret);
    const { csrf: secondCsrf } = await fetchPage(stack.url, requestId, second);
    const { csrf } = await fetchPage(stack.url, requestId, session);
    expectRefused(await decideOverTrpc("approve", requestId, sessionHeaders(session, undefined)), "PERMISSION_DENIED", 403);
    expectRefused(await decideOverTrpc("approve", requestId, sessionHeaders(session, secondCsrf)), "PERMISSION_DENIED", 403);
    expect((await postDecision(stack.url, requestId, "approve", { session })).status).toBe(403);
    expect((await postDecision(stack.url, requestId, "approve", { session, csrf: secondCsrf! })).status).toBe(403);
    expect((await postDecision(stack.url, requestId, "approve", { session, csrf: csrf!, headers: { "sec-fetch-site": "cross-site" } })).status).toBe(403);
    expectRefused(await decideOverTrpc("approve", requestId, { "x-toolpact-csrf": csrf! }), "UNAUTHENTICATED", 401);
    expect(await statusOf(headers, requestId)).toMatchObject({ status: "pending" });
  });

  it("refuses another user's session, and a session of another tenant with the same user id", async () => {
    const headers = await as(ASSISTANT_ID);
    const { requestId } = await platformPreview(headers);
    for (const spec of [{ sub: "user-2" }, { tid: "t2" }]) {
      const session = await signIn(stack.url, secrets.actorSecret, spec);
      // The page refuses them, so use a CSRF token that is valid for their session: from a request of their own.
      const theirHeaders = await as(ASSISTANT_ID, { sub: spec.sub ?? "user-1" }, (spec.tid ?? "t1") as Tenant);
      const own = await platformPreview(theirHeaders);
      const { csrf } = await fetchPage(stack.url, own.requestId, session);
      expect(csrf).toBeDefined();
      expectRefused(await decideOverTrpc("approve", requestId, sessionHeaders(session, csrf)), "PERMISSION_DENIED", 403);
      expect((await postDecision(stack.url, requestId, "approve", { session, csrf: csrf! })).status).toBe(403);
      expect((await postDecision(stack.url, requestId, "deny", { session, csrf: csrf! })).status).toBe(403);
    }
    expect(await statusOf(headers, requestId)).toMatchObject({ status: "pending" });
  });

  it("the actor's own session approves by form post; the caller then gets the token and executes once", async () => {
    const headers = await as(ASSISTANT_ID);
    const input = { title: "approved by form" };
    const { requestId } = await platformPreview(headers, input);
    const session = await signIn(stack.url, secrets.actorSecret);
    const { csrf } = await fetchPage(stack.url, requestId, session);
    const posted = await postDecision(stack.url, requestId, "approve", { session, csrf: csrf! });
    // The answer is the page again: what was approved, whole, with its new status and no buttons.
    expect(posted.status).toBe(200);
    expect(posted.html).toContain('data-status="approved"');
    expect(posted.html).toContain("<h2>What you approved</h2>");
    expect(posted.html).toMatch(/<pre id="input">[^<]*approved by form/);
    expect(posted.html).not.toContain("<form");
    const status = await statusOf(headers, requestId);
    expect(status.status).toBe("approved");
    expect(decodeJws(status.token!).payload).toMatchObject({ mod: "platform", sub: "user-1", cpl: ASSISTANT_ID });
    const before = stack.probe.invocations.get("create-note") ?? 0;
    ok(await mutate(stack.url, "tools.execute", { ref: createNote, input, confirmationToken: status.token }, headers));
    expect(stack.probe.invocations.get("create-note")).toBe(before + 1);
    // Decided: the page shows the status and no buttons; deciding again is refused.
    const page = await fetchPage(stack.url, requestId, session);
    expect(page.html).toContain('data-status="approved"');
    expect(page.html).not.toContain("<form");
    expect((await postDecision(stack.url, requestId, "deny", { session, csrf: csrf! })).status).toBeGreaterThanOrEqual(400);
    expect((await statusOf(headers, requestId)).status).toBe("approved");
  });

  it("deny over tRPC with the session: the caller sees denied and the request shows its status", async () => {
    const headers = await as(ASSISTANT_ID);
    const { requestId } = await platformPreview(headers);
    const session = await signIn(stack.url, secrets.actorSecret);
    const { csrf } = await fetchPage(stack.url, requestId, session);
    ok(await decideOverTrpc("deny", requestId, sessionHeaders(session, csrf)));
    expect(await statusOf(headers, requestId)).toEqual({ status: "denied" });
    expect((await fetchPage(stack.url, requestId, session)).html).toContain('data-status="denied"');
  });

  it("the activity log shows confirmations approved and denied", async () => {
    const events = (await stack.adminQuery<{ events: { kind: string; outcome: string; phase: string }[] }>("listActivity", { tenantId: "t1", limit: 1000 }))
      .events;
    const confirmations = events.filter((event) => event.kind === "confirmation");
    expect(confirmations.some((event) => event.outcome === "approved")).toBe(true);
    expect(confirmations.some((event) => event.outcome === "denied")).toBe(true);
  });
});

describe("confirmations.wait and cancel", () => {
  it("wait answers pending within its timeout, and approved right after a decision", async () => {
    const headers = await as(ASSISTANT_ID);
    const { requestId } = await platformPreview(headers);
    let started = Date.now();
    expect(ok<{ status: string }>(await query(stack.url, "confirmations.wait", { requestId, timeoutMs: 300 }, headers)).status).toBe("pending");
    expect(Date.now() - started).toBeLessThan(2_000);

    const session = await signIn(stack.url, secrets.actorSecret);
    const { csrf } = await fetchPage(stack.url, requestId, session);
    started = Date.now();
    const waiting = query(stack.url, "confirmations.wait", { requestId }, headers);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const decidedAt = Date.now();
    ok(await decideOverTrpc("approve", requestId, sessionHeaders(session, csrf)));
    const answer = ok<{ status: string; token?: string }>(await waiting);
    expect(answer.status).toBe("approved");
    expect(answer.token).toBeTypeOf("string");
    expect(Date.now() - decidedAt).toBeLessThan(1_500);
  });

  it("cancel withdraws a pending request: the caller sees cancelled, the page shows it, approve is refused", async () => {
    const headers = await as(ASSISTANT_ID);
    const { requestId } = await platformPreview(headers);
    const session = await signIn(stack.url, secrets.actorSecret);
    const { csrf } = await fetchPage(stack.url, requestId, session);
    // Only the caller and actor the request was made for may cancel it.
    expect(codeOf(await mutate(stack.url, "confirmations.cancel", { requestId }, await as(OTHER_CALLER_ID)))).toBeDefined();
    expect((await statusOf(headers, requestId)).status).toBe("pending");
    ok(await mutate(stack.url, "confirmations.cancel", { requestId }, headers));
    expect(await statusOf(headers, requestId)).toEqual({ status: "cancelled" });
    expect(ok<{ status: string }>(await query(stack.url, "confirmations.wait", { requestId }, headers)).status).toBe("cancelled");
    const page = await fetchPage(stack.url, requestId, session);
    expect(page.html).toContain('data-status="cancelled"');
    expect(page.html).not.toContain("<form");
    expect((await decideOverTrpc("approve", requestId, sessionHeaders(session, csrf))).status).toBeGreaterThanOrEqual(400);
    expect(await statusOf(headers, requestId)).toEqual({ status: "cancelled" });
  });
});

describe("expiry", () => {
  it("an expired request shows its status without buttons, cannot be approved, and the caller sees expired", async () => {
    const headers = await as(ASSISTANT_ID);
    const { requestId } = await platformPreview(headers);
    const session = await signIn(stack.url, secrets.actorSecret);
    const { csrf } = await fetchPage(stack.url, requestId, session);
    clockOffset = 301_000;
    const page = await fetchPage(stack.url, requestId, session);
    expect(page.status).toBe(200);
    expect(page.html).toContain('data-status="expired"');
    expect(page.html).not.toContain("<form");
    expect((await postDecision(stack.url, requestId, "approve", { session, csrf: csrf! })).status).toBeGreaterThanOrEqual(400);
    expect(await statusOf(headers, requestId)).toEqual({ status: "expired" });
    const events = (await stack.adminQuery<{ events: { kind: string; outcome: string }[] }>("listActivity", { tenantId: "t1", limit: 1000 })).events;
    expect(events.some((event) => event.kind === "confirmation" && event.outcome === "expired")).toBe(true);
  });
});

describe("confirmation mode", () => {
  it("a token-mode token is refused at execute once policy demands platform mode", async () => {
    await stack.admin("setPolicy", { tenantId: "t1", policy: TEST_POLICY });
    const headers = await as(ASSISTANT_ID);
    const input = { title: "mode switch" };
    const answer = ok<{ confirmation: { mode: string; token: string } }>(await mutate(stack.url, "tools.preview", { ref: createNote, input }, headers));
    expect(answer.confirmation.mode).toBe("token");
    expect(decodeJws(answer.confirmation.token).payload.mod).toBe("token");
    await stack.admin("setPolicy", { tenantId: "t1", policy: PLATFORM_POLICY });
    const before = stack.probe.invocations.get("create-note") ?? 0;
    const refused = await mutate(stack.url, "tools.execute", { ref: createNote, input, confirmationToken: answer.confirmation.token }, headers);
    expect(refused.body.error, JSON.stringify(refused.body)).toBeDefined();
    expect(codeOf(refused)).toBe("CONFIRMATION_MISMATCH");
    expect(refused.body.error?.message).toMatch(/platform mode/);
    expect(stack.probe.invocations.get("create-note") ?? 0).toBe(before);
  });

  it("a caller the policy does not name as a trusted UI never gets a token from preview", async () => {
    await stack.admin("setPolicy", {
      tenantId: "t1",
      policy: { ...TEST_POLICY, trustedConfirmationUis: [OTHER_CALLER_ID] },
    });
    const answer = ok<{ confirmation: Record<string, unknown> }>(
      await mutate(stack.url, "tools.preview", { ref: createNote, input: { title: "untrusted" } }, await as(ASSISTANT_ID)),
    );
    expect(answer.confirmation.token).toBeUndefined();
    expect(answer.confirmation.mode).toBe("platform");
  });
});
