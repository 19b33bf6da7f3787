/**
 * The console's session cookie and CSRF tokens: what a forger, a stale cookie, a confirmation-page
 * cookie or a changed admin key can and cannot do; and where the console may be served at all.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createConsoleSessions, type ConsoleSessionOptions } from "../../packages/server/src/console/console-session.js";
import { createPresenceSessions } from "../../packages/server/src/presence-session.js";
import { createFetchHandler, createNodeHandler, createToolpactServer } from "../../packages/server/src/index.js";
import { startSeededConsole } from "./support/seeded-console.js";

const secret = new Uint8Array(randomBytes(32));
const NOW = 1_800_000_000_000;

function sessions(overrides: Partial<ConsoleSessionOptions> = {}) {
  return createConsoleSessions({ secret, adminKey: "admin-key-1", ttlSeconds: 600, secure: false, path: "/console", clock: () => NOW, ...overrides });
}

/** The `Cookie` header a browser would send back for a `Set-Cookie` value. */
const cookieOf = (setCookie: string) => setCookie.split(";")[0]!;

describe("console sessions", () => {
  it("read back what they issue, until they expire", () => {
    const codec = sessions();
    const { session, setCookie } = codec.issue();
    expect(setCookie).toMatch(/^toolpact-console=[^;]+; Path=\/console; Max-Age=600; HttpOnly; SameSite=Strict$/);
    expect(codec.read(cookieOf(setCookie))).toEqual(session);
    expect(sessions({ clock: () => NOW + 600_000 }).read(cookieOf(setCookie))).toBeUndefined();
  });

  it("are Secure with the __Secure- prefix on https", () => {
    const { setCookie } = sessions({ secure: true }).issue();
    expect(setCookie).toMatch(/^__Secure-toolpact-console=[^;]+; Path=\/console; Max-Age=600; HttpOnly; SameSite=Strict; Secure$/);
  });

  it("refuse a cookie with a changed expiry, session id or signature, or sent twice", () => {
    const codec = sessions();
    const value = cookieOf(codec.issue().setCookie).slice("toolpact-console=".length);
    const [id, expires, mac] = value.split(".") as [string, string, string];
    const later = (Number.parseInt(expires, 36) + 3_600_000).toString(36);
    // Each forgery differs from the real cookie whatever its random id and MAC happen to be.
    const otherId = `${id.startsWith("x") ? "y" : "x"}${id.slice(1)}`;
    const otherMac = `${mac.slice(0, -2)}${mac.endsWith("AA") ? "BB" : "AA"}`;
    for (const forged of [`${id}.${later}.${mac}`, `${otherId}.${expires}.${mac}`, `${id}.${expires}.${otherMac}`, `${id}.${expires}`, ""]) {
      expect(codec.read(`toolpact-console=${forged}`), forged).toBeUndefined();
    }
    expect(codec.read(`toolpact-console=${value}; toolpact-console=${value}`)).toBeUndefined();
  });

  it("end when the admin key changes, and are not confirmation-page sessions (nor the other way round)", () => {
    const { setCookie } = sessions().issue();
    expect(sessions({ adminKey: "admin-key-2" }).read(cookieOf(setCookie))).toBeUndefined();
    const page = createPresenceSessions({ secret, ttlSeconds: 600, secure: false, path: "/confirm", clock: () => NOW });
    const person = page.issue({ tenantId: "t", userId: "u", notAfter: NOW + 600_000 });
    const pageValue = cookieOf(person.setCookie).split("=")[1]!;
    expect(sessions().read(`toolpact-console=${pageValue}`)).toBeUndefined();
    const consoleValue = cookieOf(setCookie).split("=")[1]!;
    expect(page.read(`${page.cookieName}=${consoleValue}`)).toBeUndefined();
  });

  it("accept only their own session's CSRF token", () => {
    const codec = sessions();
    const mine = codec.issue().session;
    const theirs = codec.issue().session;
    expect(codec.csrfMatches(mine, codec.csrfTokenOf(mine))).toBe(true);
    for (const token of [codec.csrfTokenOf(theirs), sessions({ adminKey: "admin-key-2" }).csrfTokenOf(mine), "", undefined, "A".repeat(43)]) {
      expect(codec.csrfMatches(mine, token)).toBe(false);
    }
  });
});

describe("where the console may be served", () => {
  it("only on a server of its own, with an admin key", async () => {
    const world = await startSeededConsole({ console: { enabled: false } });
    try {
      const runtime = world.host.runtime;
      expect(() => createNodeHandler({ runtime, adminKey: "k", console: {} })).toThrow(/served only by a server of its own/);
      expect(() => createFetchHandler({ runtime, adminKey: "k", console: {} })).toThrow(/served only by a server of its own/);
      expect(() => createToolpactServer({ runtime, adminKey: undefined, console: {} })).toThrow(/signs in with the admin key/);
    } finally {
      await world.close();
    }
  });
});
