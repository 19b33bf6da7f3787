import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createPresenceSessions, derivePresenceSessionSecret, personDeciding, type PresenceSessions } from "./presence-session.js";

const secret = new Uint8Array(randomBytes(32));

function sessions(options: { secure?: boolean; now?: () => number; secret?: Uint8Array } = {}): PresenceSessions {
  return createPresenceSessions({
    secret: options.secret ?? secret,
    ttlSeconds: 600,
    secure: options.secure ?? false,
    path: "/confirm",
    clock: options.now ?? Date.now,
  });
}

/** The `name=value` part of a Set-Cookie header, as a browser sends it back. */
function cookieOf(setCookie: string): string {
  return setCookie.split(";")[0]!;
}

describe("presence sessions", () => {
  it("issue an HttpOnly, SameSite=Strict cookie scoped to the confirmation page, Secure only for https", () => {
    const { setCookie } = sessions().issue({ tenantId: "t1", userId: "u1", notAfter: Number.MAX_SAFE_INTEGER });
    expect(setCookie).toMatch(/^toolpact-confirm=[^;]+; Path=\/confirm; Max-Age=600; HttpOnly; SameSite=Strict$/);
    const secure = sessions({ secure: true }).issue({ tenantId: "t1", userId: "u1", notAfter: Number.MAX_SAFE_INTEGER }).setCookie;
    expect(secure).toMatch(/^__Secure-toolpact-confirm=[^;]+; .*; Secure$/);
  });

  it("never outlive the presence token that signed the person in", () => {
    let now = 1_750_000_000_000;
    const codec = sessions({ now: () => now });
    const { session, setCookie } = codec.issue({ tenantId: "t1", userId: "u1", notAfter: now + 90_000 });
    expect(session.expiresAt).toBe(now + 90_000);
    expect(setCookie).toContain("Max-Age=90;");
    now += 89_000;
    expect(codec.read(cookieOf(setCookie))).toEqual(session);
    now += 1_000;
    expect(codec.read(cookieOf(setCookie))).toBeUndefined();
  });

  it("read back the session they issued, among other cookies", () => {
    const codec = sessions();
    const { session, setCookie } = codec.issue({ tenantId: "t1", userId: "u1", notAfter: Number.MAX_SAFE_INTEGER });
    expect(codec.read(`theme=dark; ${cookieOf(setCookie)}; other=1`)).toEqual(session);
    expect(session.sessionId).toMatch(/^[A-Za-z0-9_-]{24}$/);
  });

  it("refuse a tampered payload, a forged signature, another secret's cookie and an expired one", () => {
    const codec = sessions();
    const cookie = cookieOf(codec.issue({ tenantId: "t1", userId: "u1", notAfter: Number.MAX_SAFE_INTEGER }).setCookie);
    const [name, value] = cookie.split("=") as [string, string];
    const [payload, mac] = value.split(".") as [string, string];
    const fields = JSON.parse(Buffer.from(payload, "base64url").toString()) as unknown[];
    const otherUser = Buffer.from(JSON.stringify(["t1", "u2", fields[2], fields[3]])).toString("base64url");
    expect(codec.read(`${name}=${otherUser}.${mac}`)).toBeUndefined();
    const forged = createHmac("sha256", randomBytes(32)).update(otherUser).digest("base64url");
    expect(codec.read(`${name}=${otherUser}.${forged}`)).toBeUndefined();
    expect(codec.read(`${name}=${payload}.`)).toBeUndefined();
    expect(codec.read(`${name}=${payload}`)).toBeUndefined();
    expect(sessions({ secret: new Uint8Array(randomBytes(32)) }).read(cookie)).toBeUndefined();
    expect(sessions({ now: () => Date.now() + 601_000 }).read(cookie)).toBeUndefined();
  });

  it("carry the request a bound sign-in is for, signed: such a session speaks for nobody on another request", () => {
    const codec = sessions();
    const { session, setCookie } = codec.issue({ tenantId: "t1", userId: "u1", notAfter: Number.MAX_SAFE_INTEGER, requestId: "req-a" });
    expect(codec.read(cookieOf(setCookie))).toEqual(session);
    expect(session.requestId).toBe("req-a");
    const byToken = { method: "presence-token", subject: "u1" };
    expect(personDeciding(session, "req-a")).toEqual({ tenantId: "t1", userId: "u1", attestation: byToken });
    expect(() => personDeciding(session, "req-b")).toThrow(/this sign-in is for confirmation request "req-a" only/);
    // Unbound sessions decide any request of their person; unbinding a bound cookie breaks its signature.
    const unbound = codec.issue({ tenantId: "t1", userId: "u1", notAfter: Number.MAX_SAFE_INTEGER }).session;
    expect(personDeciding(unbound, "req-b")).toEqual({ tenantId: "t1", userId: "u1", attestation: byToken });
    const [name, value] = cookieOf(setCookie).split("=") as [string, string];
    const [payload, mac] = value.split(".") as [string, string];
    const fields = JSON.parse(Buffer.from(payload, "base64url").toString()) as unknown[];
    const widened = Buffer.from(JSON.stringify([...fields.slice(0, 4), null, ...fields.slice(5)])).toString("base64url");
    expect(codec.read(`${name}=${widened}.${mac}`)).toBeUndefined();
  });

  it("carry how the person signed in, signed: a presence-token session cannot pass for a sign-in at the OpenID provider", () => {
    const codec = sessions();
    const attestation = { method: "oidc", subject: "sub-1", issuer: "https://id.example" } as const;
    const { session, setCookie } = codec.issue({ tenantId: "t1", userId: "u1", notAfter: Number.MAX_SAFE_INTEGER, attestation });
    expect(codec.read(cookieOf(setCookie))?.attestation).toEqual(attestation);
    expect(personDeciding(session, "req-a").attestation).toEqual(attestation);
    const byToken = cookieOf(codec.issue({ tenantId: "t1", userId: "u1", notAfter: Number.MAX_SAFE_INTEGER }).setCookie);
    const [name, value] = byToken.split("=") as [string, string];
    const [payload, mac] = value.split(".") as [string, string];
    const fields = JSON.parse(Buffer.from(payload, "base64url").toString()) as unknown[];
    const promoted = Buffer.from(JSON.stringify([...fields.slice(0, 5), "oidc", "u1", "https://id.example"])).toString("base64url");
    expect(codec.read(`${name}=${promoted}.${mac}`)).toBeUndefined();
  });

  it("refuse a header carrying the cookie twice (a tossed cookie next to the real one)", () => {
    const codec = sessions();
    const cookie = cookieOf(codec.issue({ tenantId: "t1", userId: "u1", notAfter: Number.MAX_SAFE_INTEGER }).setCookie);
    expect(codec.read(`${cookie}; ${cookie}`)).toBeUndefined();
    expect(codec.read(undefined)).toBeUndefined();
  });

  it("bind CSRF tokens to one session", () => {
    const codec = sessions();
    const a = codec.issue({ tenantId: "t1", userId: "u1", notAfter: Number.MAX_SAFE_INTEGER }).session;
    const b = codec.issue({ tenantId: "t1", userId: "u1", notAfter: Number.MAX_SAFE_INTEGER }).session;
    const token = codec.csrfTokenOf(a);
    expect(codec.csrfMatches(a, token)).toBe(true);
    expect(codec.csrfMatches(b, token)).toBe(false);
    expect(codec.csrfMatches(a, undefined)).toBe(false);
    expect(codec.csrfMatches(a, "")).toBe(false);
    expect(codec.csrfMatches(a, token.slice(0, -2))).toBe(false);
    expect(codec.csrfMatches(a, codec.csrfTokenOf(b))).toBe(false);
    // The CSRF token is not the cookie's MAC and reveals nothing that makes a cookie.
    expect(token).not.toBe(codec.issue({ tenantId: "t1", userId: "u1", notAfter: Number.MAX_SAFE_INTEGER }).setCookie.split(".")[1]);
  });

  it("derive the same secret on every instance from the same key, and different ones from different keys", () => {
    const key = new Uint8Array(randomBytes(32));
    expect(derivePresenceSessionSecret(key)).toEqual(derivePresenceSessionSecret(key));
    expect(derivePresenceSessionSecret(key)).not.toEqual(key);
    expect(derivePresenceSessionSecret(key)).not.toEqual(derivePresenceSessionSecret(new Uint8Array(randomBytes(32))));
    const first = sessions({ secret: derivePresenceSessionSecret(key) });
    const second = sessions({ secret: derivePresenceSessionSecret(key) });
    const cookie = cookieOf(first.issue({ tenantId: "t1", userId: "u1", notAfter: Number.MAX_SAFE_INTEGER }).setCookie);
    expect(second.read(cookie)?.userId).toBe("u1");
  });

  it("refuse a short secret", () => {
    expect(() => sessions({ secret: new Uint8Array(16) })).toThrow(/at least 32 bytes/);
  });
});
