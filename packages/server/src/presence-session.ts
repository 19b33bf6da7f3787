import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { ToolpactError } from "@toolpact/contract";
import type { ConfirmationPerson } from "@toolpact/runtime";

/** The person a confirmation-page session speaks for, as a verified presence token named them. */
export interface PresenceSession {
  readonly tenantId: string;
  readonly userId: string;
  /** Random id of this session; its CSRF token is bound to it. */
  readonly sessionId: string;
  /** Unix ms. */
  readonly expiresAt: number;
  /** The one confirmation request this session may see and decide, when its presence token named one (`cfr`). */
  readonly requestId?: string;
}

/**
 * The person a session speaks for on request `requestId`; a session made from a presence token bound to
 * another request (`cfr`) speaks for nobody there.
 * @throws ToolpactError PERMISSION_DENIED when the session is bound to another request.
 */
export function personDeciding(session: PresenceSession, requestId: string): ConfirmationPerson {
  if (session.requestId !== undefined && session.requestId !== requestId) {
    throw new ToolpactError(
      "PERMISSION_DENIED",
      `this sign-in is for confirmation request "${session.requestId}" only: it can neither show nor decide another request; ` +
        "open the link your app gave for this one",
    );
  }
  return { tenantId: session.tenantId, userId: session.userId };
}

/** Options of `createPresenceSessions`. */
export interface PresenceSessionOptions {
  /**
   * At least 32 bytes. The cookie's and the CSRF token's HMAC keys are derived from it (HKDF), so
   * every instance given the same secret accepts the same sessions.
   */
  readonly secret: Uint8Array;
  /** How long a session lasts, seconds. */
  readonly ttlSeconds: number;
  /** Adds `Secure` and the `__Secure-` name prefix (an https `publicUrl`). */
  readonly secure: boolean;
  /** The cookie's `Path`: the confirmation page's path, e.g. `/confirm`. */
  readonly path: string;
  readonly clock: () => number;
}

/**
 * Stateless confirmation-page sessions: an HMAC-signed cookie naming tenant, user, session id, expiry
 * and the one request it is bound to (if any), and CSRF tokens that are an HMAC of the session id under a second derived key.
 */
export interface PresenceSessions {
  /** The cookie's name. */
  readonly cookieName: string;
  /**
   * A new session for a verified person, lasting the configured TTL but never past `notAfter` (the
   * presence token's expiry, Unix ms), and bound to `requestId` when given; `setCookie` is the `Set-Cookie` header value.
   */
  issue(person: { readonly tenantId: string; readonly userId: string; readonly notAfter: number; readonly requestId?: string }): {
    session: PresenceSession;
    setCookie: string;
  };
  /** The session a `Cookie` header carries, if its signature holds and it has not expired. */
  read(cookieHeader: string | undefined): PresenceSession | undefined;
  /** The CSRF token of a session (what the page embeds in its forms). */
  csrfTokenOf(session: PresenceSession): string;
  /** True only for the session's own CSRF token; compared in constant time. */
  csrfMatches(session: PresenceSession, presented: string | undefined): boolean;
}

/** The shortest secret `createPresenceSessions` accepts. */
export const MIN_SESSION_SECRET_BYTES = 32;
const MAX_COOKIE_VALUE = 2048;
const MAC_BYTES = 32;

/** Derives the session secret from another secret (the host uses its first signing key), HKDF-SHA256. */
export function derivePresenceSessionSecret(root: Uint8Array): Uint8Array {
  return new Uint8Array(hkdfSync("sha256", root, new Uint8Array(0), "toolpact-confirm-session-root", 32));
}

/** Creates the session codec; throws TypeError for a short secret or a bad TTL. */
export function createPresenceSessions(options: PresenceSessionOptions): PresenceSessions {
  if (options.secret.byteLength < MIN_SESSION_SECRET_BYTES) {
    throw new TypeError(`the confirmation session secret must be at least ${MIN_SESSION_SECRET_BYTES} bytes`);
  }
  if (!Number.isInteger(options.ttlSeconds) || options.ttlSeconds < 1) {
    throw new TypeError(`the confirmation session TTL must be a positive integer of seconds; got ${options.ttlSeconds}`);
  }
  const derive = (info: string) => Buffer.from(hkdfSync("sha256", options.secret, new Uint8Array(0), info, 32));
  const cookieKey = derive("toolpact-confirm-session-cookie");
  const csrfKey = derive("toolpact-confirm-session-csrf");
  const cookieName = options.secure ? "__Secure-toolpact-confirm" : "toolpact-confirm";
  const attributes = (maxAge: number) => `Path=${options.path}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${options.secure ? "; Secure" : ""}`;
  const { clock } = options;

  const mac = (key: Buffer, text: string) => createHmac("sha256", key).update(text, "utf8").digest();

  return {
    cookieName,
    issue(person) {
      const now = clock();
      const session: PresenceSession = {
        tenantId: person.tenantId,
        userId: person.userId,
        sessionId: randomBytes(18).toString("base64url"),
        expiresAt: Math.min(now + options.ttlSeconds * 1000, person.notAfter),
        ...(person.requestId === undefined ? {} : { requestId: person.requestId }),
      };
      const payload = Buffer.from(
        JSON.stringify([session.tenantId, session.userId, session.sessionId, session.expiresAt, session.requestId ?? null]),
        "utf8",
      ).toString("base64url");
      const value = `${payload}.${mac(cookieKey, payload).toString("base64url")}`;
      const maxAge = Math.max(0, Math.floor((session.expiresAt - now) / 1000));
      return { session, setCookie: `${cookieName}=${value}; ${attributes(maxAge)}` };
    },
    read(cookieHeader) {
      const value = cookieValue(cookieHeader, cookieName);
      if (value === undefined || value.length > MAX_COOKIE_VALUE) return undefined;
      const dot = value.indexOf(".");
      if (dot <= 0) return undefined;
      const payload = value.slice(0, dot);
      const presented = Buffer.from(value.slice(dot + 1), "base64url");
      if (presented.byteLength !== MAC_BYTES || !timingSafeEqual(presented, mac(cookieKey, payload))) return undefined;
      let fields: unknown;
      try {
        fields = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
      } catch {
        return undefined;
      }
      if (!Array.isArray(fields) || fields.length !== 5) return undefined;
      const [tenantId, userId, sessionId, expiresAt, requestId] = fields as unknown[];
      if (typeof tenantId !== "string" || typeof userId !== "string" || typeof sessionId !== "string") return undefined;
      if (typeof expiresAt !== "number" || !(expiresAt > clock())) return undefined;
      if (requestId !== null && typeof requestId !== "string") return undefined;
      return { tenantId, userId, sessionId, expiresAt, ...(requestId === null ? {} : { requestId }) };
    },
    csrfTokenOf: (session) => mac(csrfKey, session.sessionId).toString("base64url"),
    csrfMatches(session, presented) {
      if (presented === undefined || presented.length === 0 || presented.length > 64) return false;
      const bytes = Buffer.from(presented, "base64url");
      return bytes.byteLength === MAC_BYTES && timingSafeEqual(bytes, mac(csrfKey, session.sessionId));
    },
  };
}

/** The value of cookie `name` in a `Cookie` header; undefined when absent or present more than once. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  let found: string | undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    if (found !== undefined) return undefined;
    found = part.slice(eq + 1).trim();
  }
  return found;
}
