import { randomUUID } from "node:crypto";
import * as jose from "jose";

/** Claims and signing choices for a test actor token; every field has a valid default. */
export interface ActorTokenSpec {
  readonly sub?: string;
  readonly tid?: string;
  readonly lvl?: number;
  readonly roles?: readonly string[];
  readonly azp?: string;
  readonly iss?: string;
  readonly aud?: string;
  /** Seconds from now; negative for an expired token. Default 600. */
  readonly expiresIn?: number;
  /** Sign with this secret instead of the configured one (a forged token). */
  readonly secret?: Uint8Array;
}

export const ACTOR_ISSUER = "https://id.test.example";

/** Mints an HS256 actor token as the platform identity service would. */
export async function mintActorToken(secret: Uint8Array, spec: ActorTokenSpec = {}): Promise<string> {
  const claims: Record<string, unknown> = { tid: spec.tid ?? "t1", lvl: spec.lvl ?? 1 };
  if (spec.roles) claims.roles = [...spec.roles];
  if (spec.azp) claims.azp = spec.azp;
  return new jose.SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(spec.iss ?? ACTOR_ISSUER)
    .setAudience(spec.aud ?? "toolpact")
    .setSubject(spec.sub ?? "user-1")
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + (spec.expiresIn ?? 600))
    .sign(spec.secret ?? secret);
}

/** An unsigned (`alg: none`) JWT with the given claims. */
export function unsignedToken(claims: Record<string, unknown>, header: Record<string, unknown> = { alg: "none", typ: "JWT" }): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part(header)}.${part(claims)}.`;
}

/** Decodes a compact JWS's header and payload without verifying it. */
export function decodeJws(token: string): { header: Record<string, unknown>; payload: Record<string, unknown>; signature: string } {
  const [header, payload, signature] = token.split(".");
  const decode = (part: string | undefined) => JSON.parse(Buffer.from(part ?? "", "base64url").toString("utf8")) as Record<string, unknown>;
  return { header: decode(header), payload: decode(payload), signature: signature ?? "" };
}

/** Re-encodes a compact JWS with a changed header or payload, keeping the old signature (a tampered token). */
export function tamperJws(token: string, change: { header?: Record<string, unknown>; payload?: Record<string, unknown> }): string {
  const decoded = decodeJws(token);
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ ...decoded.header, ...change.header })}.${part({ ...decoded.payload, ...change.payload })}.${decoded.signature}`;
}

/** Claims and signing choices for a presence token (the confirmation page's sign-in); valid defaults. */
export interface PresenceTokenSpec {
  readonly sub?: string;
  readonly tid?: string;
  readonly iss?: string;
  readonly aud?: string;
  /** The token's id; default a fresh UUID (a presence token signs in once). */
  readonly jti?: string;
  /** Seconds from now; negative for an expired token. Default 120. */
  readonly expiresIn?: number;
  readonly secret?: Uint8Array;
  /** The one confirmation request the sign-in is for (`cfr`); default none. */
  readonly cfr?: unknown;
}

/** Mints a presence token (aud "toolpact-presence") as the platform identity service would. */
export async function mintPresenceToken(secret: Uint8Array, spec: PresenceTokenSpec = {}): Promise<string> {
  return new jose.SignJWT({ tid: spec.tid ?? "t1", ...(spec.cfr === undefined ? {} : { cfr: spec.cfr }) })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(spec.iss ?? ACTOR_ISSUER)
    .setAudience(spec.aud ?? "toolpact-presence")
    .setSubject(spec.sub ?? "user-1")
    .setJti(spec.jti ?? randomUUID())
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + (spec.expiresIn ?? 120))
    .sign(spec.secret ?? secret);
}
