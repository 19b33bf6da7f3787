/**
 * The confirmation page's sign-in over HTTP: a presence token signs a browser in once (on every
 * instance sharing the database), the session never outlives the token, and another site can only
 * navigate a browser to the sign-in, never post it (login CSRF) or post decisions.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROVIDER_ID } from "./support/plugins.js";
import { callerHeadersOf, configureWorld, makeSecrets, startStack, type Stack } from "./support/stack.js";
import { fetchPage, postDecision, signIn } from "./support/confirm-page.js";
import { mintPresenceToken } from "./support/tokens.js";
import { mutate, ok } from "./support/wire.js";

let dir: string;
let stack: Stack;
let peer: Stack;
let requestId: string;
let previewAnother: (title: string) => Promise<string>;
const secrets = makeSecrets();

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-presence-"));
  const dbFile = path.join(dir, "toolpact.db");
  stack = await startStack({ dbFile, secrets });
  peer = await startStack({ dbFile, secrets });
  const keys = await configureWorld(stack);
  const policy = { rules: [{ tools: "com.test.*", decision: "confirm", mode: "platform" }] };
  await stack.admin("setPolicy", { tenantId: "t1", policy });
  const headers = await callerHeadersOf(keys, secrets.actorSecret)("com.test.assistant");
  const preview = ok<{ confirmation: { requestId: string } }>(
    await mutate(stack.url, "tools.preview", { ref: { providerId: PROVIDER_ID, tool: "create-note" }, input: { title: "Q3" } }, headers),
  );
  requestId = preview.confirmation.requestId;
  previewAnother = async (title) =>
    ok<{ confirmation: { requestId: string } }>(
      await mutate(stack.url, "tools.preview", { ref: { providerId: PROVIDER_ID, tool: "create-note" }, input: { title } }, headers),
    ).confirmation.requestId;
});

afterAll(async () => {
  await peer?.close();
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A response as node:http gives it (fetch would set Sec-Fetch-Mode itself, and these tests set it as browsers do). */
interface RawResponse {
  readonly status: number;
  readonly setCookie: string | undefined;
  readonly body: string;
}

function raw(url: string, options: { method: "GET" | "POST"; headers: Record<string, string>; body?: string }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method, headers: options.headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, setCookie: res.headers["set-cookie"]?.[0], body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/** GET /confirm/session with a token and the given request headers. */
function sessionGet(url: string, token: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return raw(`${url}/confirm/session?token=${encodeURIComponent(token)}`, { method: "GET", headers });
}

describe("presence tokens", () => {
  it("sign a browser in once: a copied sign-in link is refused the second time, on this instance and on another", async () => {
    const token = await mintPresenceToken(secrets.actorSecret);
    const first = await sessionGet(stack.url, token);
    expect(first.status).toBe(200);
    expect(first.setCookie).toMatch(/toolpact-confirm=/);
    for (const url of [stack.url, peer.url]) {
      const replay = await sessionGet(url, token);
      expect(replay.status).toBe(401);
      expect(replay.setCookie).toBeUndefined();
      expect(replay.body).toContain("used already");
    }
  });

  it("refuse a token without a jti (each must be usable once)", async () => {
    const noJti = await new SignJWT({ tid: "t1" })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer("https://id.test.example")
      .setAudience("toolpact-presence")
      .setSubject("user-1")
      .setIssuedAt()
      .setExpirationTime("2m")
      .sign(secrets.actorSecret);
    const response = await sessionGet(stack.url, noJti);
    expect(response.status).toBe(401);
    expect(response.body).toContain("jti");
  });

  it("refuse a token whose base64url was re-encoded in its unused bits", async () => {
    const token = await mintPresenceToken(secrets.actorSecret);
    const signature = token.slice(token.lastIndexOf(".") + 1);
    // 32 bytes are 43 base64url characters: the last one carries 2 unused bits; set one.
    const last = signature.at(-1)!;
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const twin = alphabet[alphabet.indexOf(last) ^ 1]!;
    const reencoded = token.slice(0, -1) + twin;
    expect(Buffer.from(reencoded.split(".")[2]!, "base64url").equals(Buffer.from(signature, "base64url"))).toBe(true);
    const response = await sessionGet(stack.url, reencoded);
    expect(response.status).toBe(401);
    expect(response.body).toContain("canonical");
  });

  it("make a session that ends when the token does, not at the session TTL", async () => {
    const session = await signIn(stack.url, secrets.actorSecret, { expiresIn: 30 });
    const maxAge = Number(/Max-Age=(\d+)/.exec(session.setCookie)![1]);
    expect(maxAge).toBeGreaterThan(20);
    expect(maxAge).toBeLessThanOrEqual(30);
    expect((await fetchPage(stack.url, requestId, session)).status).toBe(200);
  });
});

describe("another site", () => {
  it("may navigate a browser to the sign-in (the designed flow), but not post, embed or fetch it", async () => {
    const token = await mintPresenceToken(secrets.actorSecret);
    const crossSite = { "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" };
    for (const site of ["cross-site", "same-site"]) {
      // Login CSRF: another site's link alone signs nobody in. It gets a Continue button, and the token is not spent.
      const navigate = await sessionGet(stack.url, token, { ...crossSite, "sec-fetch-site": site });
      expect(navigate.status, site).toBe(200);
      expect(navigate.setCookie, site).toBeUndefined();
      expect(navigate.body, site).toMatch(/<form method="post" action="session"><input type="hidden" name="token" value="[^"]+">/);
      expect(navigate.body, site).toContain('id="continue"');
    }
    // The person's click posts it from the page itself (same origin): that signs in, with the same token.
    const continued = await postSession(token, { "sec-fetch-site": "same-origin", origin: stack.url });
    expect(continued.status).toBe(200);
    expect(continued.setCookie).toMatch(/toolpact-confirm=/);
    // A link the person opened themselves (typed, pasted, from a terminal: Sec-Fetch-Site none) signs in at once.
    const typed = await sessionGet(stack.url, await mintPresenceToken(secrets.actorSecret), { ...crossSite, "sec-fetch-site": "none" });
    expect(typed.setCookie).toMatch(/toolpact-confirm=/);

    const refusals: [string, () => Promise<Response>][] = [
      [
        "cross-site form post",
        async () =>
          postSession(await mintPresenceToken(secrets.actorSecret), {
            "sec-fetch-site": "cross-site",
            "sec-fetch-mode": "navigate",
            "sec-fetch-dest": "document",
          }),
      ],
      ["same-site (sibling subdomain) post", async () => postSession(await mintPresenceToken(secrets.actorSecret), { "sec-fetch-site": "same-site" })],
      [
        "post from a browser without fetch metadata, Origin elsewhere",
        async () => postSession(await mintPresenceToken(secrets.actorSecret), { origin: "https://evil.example" }),
      ],
      ["post with Origin null (sandboxed frame)", async () => postSession(await mintPresenceToken(secrets.actorSecret), { origin: "null" })],
      [
        "cross-site iframe",
        async () =>
          sessionGet(stack.url, await mintPresenceToken(secrets.actorSecret), {
            "sec-fetch-site": "cross-site",
            "sec-fetch-mode": "navigate",
            "sec-fetch-dest": "iframe",
          }),
      ],
      [
        "cross-site fetch",
        async () =>
          sessionGet(stack.url, await mintPresenceToken(secrets.actorSecret), {
            "sec-fetch-site": "cross-site",
            "sec-fetch-mode": "cors",
            "sec-fetch-dest": "empty",
          }),
      ],
    ];
    for (const [what, attempt] of refusals) {
      const response = await attempt();
      expect(response.status, what).toBe(403);
      expect(response.setCookie, what).toBeUndefined();
    }
    // The page's own form post (same origin) still signs in.
    const own = await postSession(await mintPresenceToken(secrets.actorSecret), { "sec-fetch-site": "same-origin", origin: stack.url });
    expect(own.status).toBe(200);
  });

  it("cannot post a decision, even with the person's session and CSRF token, when the browser says another site sent it", async () => {
    const session = await signIn(stack.url, secrets.actorSecret);
    const page = await fetchPage(stack.url, requestId, session);
    for (const headers of [{ "sec-fetch-site": "cross-site" }, { origin: "https://evil.example" }, { origin: "null" }]) {
      const response = await postDecision(stack.url, requestId, "approve", { session, csrf: page.csrf!, headers });
      expect(response.status, JSON.stringify(headers)).toBe(403);
    }
    expect((await fetchPage(stack.url, requestId, session)).html).toContain('id="approve"');
  });
});

function postSession(token: string, headers: Record<string, string>): Promise<RawResponse> {
  return raw(`${stack.url}/confirm/session`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({ token }).toString(),
  });
}

describe("a sign-in bound to one request (the presence token's cfr claim)", () => {
  it("shows and decides that request only: its session cannot see, approve or deny another one", async () => {
    const a = await previewAnother("request A");
    const b = await previewAnother("request B");
    const session = await signIn(stack.url, secrets.actorSecret, { cfr: a });
    const pageA = await fetchPage(stack.url, a, session);
    expect(pageA.status).toBe(200);
    expect(pageA.csrf).toBeDefined();

    const pageB = await fetchPage(stack.url, b, session);
    expect(pageB.status).toBe(403);
    expect(pageB.html).toContain(`this sign-in is for confirmation request &quot;${a}&quot; only`);
    expect(pageB.html).not.toContain("request B");
    for (const decision of ["approve", "deny"] as const) {
      expect((await postDecision(stack.url, b, decision, { session, csrf: pageA.csrf! })).status, decision).toBe(403);
      const overTrpc = await mutate(stack.url, `confirmations.${decision}`, { requestId: b }, { cookie: session.cookie, "x-toolpact-csrf": pageA.csrf! });
      expect(overTrpc.status, decision).toBe(403);
    }
    const unbound = await signIn(stack.url, secrets.actorSecret);
    expect((await fetchPage(stack.url, b, unbound)).html).toContain('id="approve"'); // B is still pending

    const approved = await postDecision(stack.url, a, "approve", { session, csrf: pageA.csrf! });
    expect(approved.status).toBe(200);
    expect(approved.html).toContain('data-status="approved"');
  });

  it("leads on to its own request whatever `next` says, and refuses a cfr that is no request id", async () => {
    const a = await previewAnother("request C");
    const token = await mintPresenceToken(secrets.actorSecret, { cfr: a });
    const next = encodeURIComponent(`/confirm/${requestId}`);
    const signedIn = await raw(`${stack.url}/confirm/session?token=${encodeURIComponent(token)}&next=${next}`, { method: "GET", headers: {} });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toContain(`href="${a}"`);
    for (const cfr of [42, "", "a b", "x".repeat(200)]) {
      const refused = await sessionGet(stack.url, await mintPresenceToken(secrets.actorSecret, { cfr }));
      expect(refused.status, JSON.stringify(cfr)).toBe(401);
      expect(refused.body).toContain("`cfr` claim must be the id of one confirmation request");
      expect(refused.setCookie).toBeUndefined();
    }
  });
});
