/**
 * The console's sign-in: a stateless, HMAC-signed session cookie (HttpOnly, SameSite=Strict, Secure on
 * https) and CSRF tokens bound to the session id. Its keys are derived (HKDF) for this purpose alone, from
 * the routes' session secret salted with a digest of the admin key: a console cookie is never a
 * confirmation-page cookie or CSRF token, and changing the admin key ends every console session.
 */
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { cookieValue } from "../presence-session.js";

/** A signed-in operator's session. */
export interface ConsoleSession {
  /** Random; the CSRF token is bound to it. */
  readonly sessionId: string;
  /** Unix ms. */
  readonly expiresAt: number;
}

/** Options of `createConsoleSessions`. */
export interface ConsoleSessionOptions {
  /** At least 32 bytes, shared by every instance (the routes' session secret). */
  readonly secret: Uint8Array;
  /** The admin key the sessions stand for. */
  readonly adminKey: string;
  readonly ttlSeconds: number;
  /** Adds `Secure` and the `__Secure-` name prefix. */
  readonly secure: boolean;
  /** The cookie's `Path`, e.g. `/console`. */
  readonly path: string;
  readonly clock: () => number;
}

/** Issues, reads and ends console sessions, and makes and checks their CSRF tokens. */
export interface ConsoleSessions {
  /** A new session and its `Set-Cookie` value. */
  issue(): { readonly session: ConsoleSession; readonly setCookie: string };
  /** The session a `Cookie` header carries, if its signature holds and it has not expired. */
  read(cookieHeader: string | undefined): ConsoleSession | undefined;
  /** A `Set-Cookie` value that removes the cookie. */
  readonly clearCookie: string;
  csrfTokenOf(session: ConsoleSession): string;
  /** True only for the session's own CSRF token; compared in constant time. */
  csrfMatches(session: ConsoleSession, presented: string | undefined): boolean;
}

const MAC_BYTES = 32;
const MAX_COOKIE_VALUE = 512;

/** Creates the console's session codec; throws TypeError for a short secret, an empty admin key or a bad TTL. */
export function createConsoleSessions(options: ConsoleSessionOptions): ConsoleSessions {
  if (options.secret.byteLength < 32) throw new TypeError("the console session secret must be at least 32 bytes");
  if (options.adminKey.length === 0) throw new TypeError("the console needs an admin key to sign in with");
  if (!Number.isInteger(options.ttlSeconds) || options.ttlSeconds < 1) {
    throw new TypeError(`the console session TTL must be a positive integer of seconds; got ${options.ttlSeconds}`);
  }
  const salt = createHash("sha256").update(options.adminKey, "utf8").digest();
  const derive = (info: string) => Buffer.from(hkdfSync("sha256", options.secret, salt, info, 32));
  const cookieKey = derive("toolpact-console-session-cookie");
  const csrfKey = derive("toolpact-console-session-csrf");
  const name = options.secure ? "__Secure-toolpact-console" : "toolpact-console";
  const attributes = (maxAge: number) => `Path=${options.path}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${options.secure ? "; Secure" : ""}`;
  const mac = (key: Buffer, text: string) => createHmac("sha256", key).update(text, "utf8").digest();
  const { clock } = options;

  return {
    issue() {
      const session: ConsoleSession = { sessionId: randomBytes(18).toString("base64url"), expiresAt: clock() + options.ttlSeconds * 1000 };
      const payload = `${session.sessionId}.${session.expiresAt.toString(36)}`;
      const value = `${payload}.${mac(cookieKey, payload).toString("base64url")}`;
      return { session, setCookie: `${name}=${value}; ${attributes(options.ttlSeconds)}` };
    },
    read(cookieHeader) {
      const value = cookieValue(cookieHeader, name);
      if (value === undefined || value.length > MAX_COOKIE_VALUE) return undefined;
      const parts = value.split(".");
      if (parts.length !== 3) return undefined;
      const [sessionId, expires, signature] = parts as [string, string, string];
      const presented = Buffer.from(signature, "base64url");
      if (presented.byteLength !== MAC_BYTES || !timingSafeEqual(presented, mac(cookieKey, `${sessionId}.${expires}`))) return undefined;
      const expiresAt = Number.parseInt(expires, 36);
      if (!Number.isSafeInteger(expiresAt) || !(expiresAt > clock())) return undefined;
      return { sessionId, expiresAt };
    },
    clearCookie: `${name}=; ${attributes(0)}`,
    csrfTokenOf: (session) => mac(csrfKey, session.sessionId).toString("base64url"),
    csrfMatches(session, presented) {
      if (presented === undefined || presented.length === 0 || presented.length > 64) return false;
      const bytes = Buffer.from(presented, "base64url");
      return bytes.byteLength === MAC_BYTES && timingSafeEqual(bytes, mac(csrfKey, session.sessionId));
    },
  };
}
