/**
 * Compact JWS for toolpact's own tokens: HS256 signed and checked synchronously on node:crypto through
 * fast-jwt (chosen over jose by bench/micro's figures), with the checks in the designed order. The header
 * is read and checked first (canonical base64url, `alg` pinned, then the caller's `typ`/`kid` checks);
 * then the signature; the caller checks expiry and its claims after, with its own clock.
 */
import { createSigner, createVerifier } from "fast-jwt";

/** A token's protected header, as sent (values unchecked). */
export type JwsHeader = Readonly<Record<string, unknown>>;

/** Why a token was refused before its claims were looked at. */
export type JwsFailure = "malformed" | "non-canonical" | "signature";

/** A token refused at the JWS layer; `failure` says which check. */
export class JwsError extends Error {
  readonly failure: JwsFailure;

  constructor(failure: JwsFailure) {
    super(`compact JWS refused: ${failure}`);
    this.name = "JwsError";
    this.failure = failure;
  }
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * True for a segment that is base64url exactly as an encoder writes it: the alphabet only, no padding,
 * and zero unused bits at the end (so no two strings decode to the same bytes).
 */
export function isCanonicalBase64url(segment: string): boolean {
  if (!BASE64URL.test(segment) || segment.length % 4 === 1) return false;
  return Buffer.from(segment, "base64url").toString("base64url") === segment;
}

/**
 * The protected header of a compact JWS whose three segments are canonical base64url.
 * @throws JwsError "malformed" (not three segments, header not a JSON object) or "non-canonical".
 */
export function readJwsHeader(token: unknown): JwsHeader {
  if (typeof token !== "string") throw new JwsError("malformed");
  const first = token.indexOf(".");
  const last = token.lastIndexOf(".");
  if (first <= 0 || first === last || token.indexOf(".", first + 1) !== last) throw new JwsError("malformed");
  const segments = [token.slice(0, first), token.slice(first + 1, last), token.slice(last + 1)];
  // A lone last character encodes no whole byte: not base64url at all.
  if (segments.some((segment) => !BASE64URL.test(segment) || segment.length % 4 === 1)) throw new JwsError("malformed");
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(segments[0]!, "base64url").toString("utf8"));
  } catch {
    throw new JwsError("malformed");
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) throw new JwsError("malformed");
  // A token that reads as one but is spelled another way than its issuer wrote it.
  if (!segments.every(isCanonicalBase64url)) throw new JwsError("non-canonical");
  return header as JwsHeader;
}

/** An HS256 secret is at least this many bytes (RFC 7518 §3.2: at least the hash's size). */
export const HS256_MIN_SECRET_BYTES = 32;

/** One HS256 key: signs tokens with a fixed `kid` and `typ`, and checks signatures made with it. */
export class Hs256Key {
  readonly kid: string | undefined;
  readonly #sign: (claims: Record<string, unknown>) => string;
  readonly #verify: (token: string) => Record<string, unknown>;

  /** @throws TypeError naming `name` when `secret` is shorter than 32 bytes. */
  constructor(secret: Uint8Array, header: { readonly kid?: string; readonly typ?: string } = {}, name = "an HS256 secret") {
    if (!(secret instanceof Uint8Array) || secret.byteLength < HS256_MIN_SECRET_BYTES) {
      throw new TypeError(
        `${name} is too short: HS256 needs at least ${HS256_MIN_SECRET_BYTES} bytes (got ${secret?.byteLength ?? 0}); generate one with \`openssl rand -base64 32\``,
      );
    }
    const key = Buffer.from(secret);
    this.kid = header.kid;
    this.#sign = createSigner({
      key,
      algorithm: "HS256",
      ...(header.kid === undefined ? {} : { kid: header.kid }),
      ...(header.typ === undefined ? {} : { header: { alg: "HS256", typ: header.typ } }),
    });
    // Time claims are the caller's to check, with its own clock and skew.
    this.#verify = createVerifier({ key, algorithms: ["HS256"], ignoreExpiration: true, ignoreNotBefore: true });
  }

  /** A compact JWS of `claims` (their `iat` kept as given). */
  sign(claims: Record<string, unknown>): string {
    return this.#sign(claims);
  }

  /**
   * The claims of a token signed with this key, after the header checks (`readJwsHeader` and the
   * caller's) passed. @throws JwsError "signature" (or "malformed" for a payload that is not a JSON object).
   */
  claimsOf(token: string): Record<string, unknown> {
    try {
      return this.#verify(token);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      throw new JwsError(code === "FAST_JWT_MALFORMED" || code === "FAST_JWT_INVALID_PAYLOAD" ? "malformed" : "signature");
    }
  }
}
