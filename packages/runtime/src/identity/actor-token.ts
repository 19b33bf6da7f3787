import { webcrypto } from "node:crypto";
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors as joseErrors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
} from "jose";
import { ToolpactError, type ActorInfo } from "@toolpact/contract";

/** How actor tokens are checked: the platform identity service's issuer and its HS256 secret or JWKS. */
export interface ActorTokenConfig {
  readonly issuer: string;
  /** HS256 shared secret (at least 32 bytes). */
  readonly secret?: Uint8Array;
  /** Public keys (RS256, ES256 or EdDSA), inline or fetched from a URL. */
  readonly jwks?: { readonly keys: readonly object[] } | URL;
}

/** What a verified actor token establishes. */
export interface VerifiedActor {
  readonly tenantId: string;
  readonly actor: ActorInfo;
  /** `azp`: the plugin the token was issued to, when the issuer named one. */
  readonly authorizedParty?: string;
  /** `exp`, in Unix milliseconds. */
  readonly expiresAt: number;
}

/** `aud` every actor token carries. */
export const ACTOR_AUDIENCE = "toolpact";
/** `aud` of presence tokens: the confirmation page's sign-in. */
export const PRESENCE_AUDIENCE = "toolpact-presence";
/** The longest a presence token may live (`exp - iat`), in seconds. */
export const PRESENCE_MAX_TTL_SECONDS = 600;

/** A person a presence token signs in. */
export interface VerifiedPresence {
  readonly tenantId: string;
  readonly userId: string;
  /** `exp`, in Unix milliseconds. */
  readonly expiresAt: number;
}
const ASYMMETRIC_ALGS = ["RS256", "ES256", "EdDSA"] as const;
const SKEW_SECONDS = 5;
const CACHE_LIMIT = 10_000;
const MAX_ROLES = 64;

/**
 * Verifies actor tokens (JWT): `alg` pinned (HS256 with a secret, else the JWKS's algorithms), `iss`,
 * `aud: "toolpact"`, `exp` (5 s skew), and the claims `sub`, `tid`, `lvl`, optional `roles` and `azp`.
 * A verified token is remembered until it expires, so a busy caller does not pay for the signature twice.
 */
export class ActorTokenVerifier {
  readonly #issuer: string;
  readonly #key: webcrypto.CryptoKey | JWTVerifyGetKey;
  readonly #algorithms: string[];
  readonly #clock: () => number;
  readonly #cache = new Map<string, VerifiedActor>();

  private constructor(parts: { issuer: string; key: webcrypto.CryptoKey | JWTVerifyGetKey; algorithms: string[]; clock: () => number }) {
    this.#issuer = parts.issuer;
    this.#key = parts.key;
    this.#algorithms = parts.algorithms;
    this.#clock = parts.clock;
  }

  /** Imports the configured key once. */
  static async create(config: ActorTokenConfig, clock: () => number): Promise<ActorTokenVerifier> {
    if (typeof config.issuer !== "string" || config.issuer === "") {
      throw new TypeError("actorTokens.issuer is required: the `iss` your identity service puts in actor tokens");
    }
    if ((config.secret === undefined) === (config.jwks === undefined)) {
      throw new TypeError("actorTokens needs exactly one of `secret` (HS256) or `jwks` (RS256, ES256, EdDSA)");
    }
    if (config.secret !== undefined) {
      const key = await webcrypto.subtle.importKey("raw", config.secret, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
      return new ActorTokenVerifier({ issuer: config.issuer, key, algorithms: ["HS256"], clock });
    }
    const jwks = config.jwks!;
    if (jwks instanceof URL) {
      return new ActorTokenVerifier({ issuer: config.issuer, key: createRemoteJWKSet(jwks), algorithms: [...ASYMMETRIC_ALGS], clock });
    }
    const algorithms = jwksAlgorithms(jwks.keys);
    if (algorithms.length === 0) {
      throw new TypeError("actorTokens.jwks has no RS256, ES256 or EdDSA key: symmetric or unknown keys are not accepted");
    }
    return new ActorTokenVerifier({ issuer: config.issuer, key: createLocalJWKSet(jwks as unknown as JSONWebKeySet), algorithms, clock });
  }

  /**
   * The actor and tenant an actor token establishes.
   * @throws ToolpactError UNAUTHENTICATED naming the check that failed (never the token).
   */
  async verify(token: string): Promise<VerifiedActor> {
    const now = this.#clock();
    const known = this.#cache.get(token);
    if (known !== undefined) {
      if (now <= known.expiresAt + SKEW_SECONDS * 1000) return known;
      this.#cache.delete(token);
      throw unauthenticated("the actor token has expired: get a fresh one from the identity service");
    }
    let payload: JWTPayload;
    try {
      const verified = await jwtVerify(token, this.#key as webcrypto.CryptoKey, {
        algorithms: this.#algorithms,
        issuer: this.#issuer,
        audience: ACTOR_AUDIENCE,
        requiredClaims: ["exp", "sub"],
        clockTolerance: SKEW_SECONDS,
        currentDate: new Date(now),
      });
      payload = verified.payload;
    } catch (error) {
      throw unauthenticated(describeJoseFailure(error), error);
    }
    const actor = actorFromClaims(payload);
    if (this.#cache.size >= CACHE_LIMIT) {
      const oldest = this.#cache.keys().next();
      if (!oldest.done) this.#cache.delete(oldest.value);
    }
    this.#cache.set(token, actor);
    return actor;
  }

  /**
   * Verifies a presence token: the same issuer and keys as actor tokens, `aud: "toolpact-presence"`,
   * `sub`, `tid`, `iat` and `exp` required, and a lifetime (`exp - iat`) of at most 600 s.
   * @throws ToolpactError UNAUTHENTICATED naming the check that failed.
   */
  async verifyPresence(token: string): Promise<VerifiedPresence> {
    if (typeof token !== "string" || token.length === 0 || token.length > 8192) {
      throw unauthenticated("no presence token: the identity service sends the browser to /confirm/session with one");
    }
    let payload: JWTPayload;
    try {
      const verified = await jwtVerify(token, this.#key as webcrypto.CryptoKey, {
        algorithms: this.#algorithms,
        issuer: this.#issuer,
        audience: PRESENCE_AUDIENCE,
        requiredClaims: ["exp", "iat", "sub"],
        clockTolerance: SKEW_SECONDS,
        currentDate: new Date(this.#clock()),
      });
      payload = verified.payload;
    } catch (error) {
      throw unauthenticated(describeJoseFailure(error).replaceAll("actor token", "presence token").replace('"toolpact"', `"${PRESENCE_AUDIENCE}"`), error);
    }
    const { sub, tid, iat, exp } = payload as JWTPayload & Record<string, unknown>;
    if (typeof sub !== "string" || sub.length === 0 || sub.length > 256) {
      throw unauthenticated("the presence token's `sub` claim (user id) must be a non-empty string of at most 256 characters");
    }
    if (typeof tid !== "string" || tid.length === 0 || tid.length > 128) {
      throw unauthenticated("the presence token's `tid` claim (tenant) must be a non-empty string of at most 128 characters");
    }
    if (typeof iat !== "number" || typeof exp !== "number" || exp - iat > PRESENCE_MAX_TTL_SECONDS) {
      throw unauthenticated(
        `the presence token lives longer than ${PRESENCE_MAX_TTL_SECONDS} s (exp - iat): the identity service must issue short-lived presence tokens`,
      );
    }
    if (iat > this.#clock() / 1000 + SKEW_SECONDS) throw unauthenticated("the presence token was issued in the future (`iat`)");
    return Object.freeze({ tenantId: tid, userId: sub, expiresAt: exp * 1000 });
  }
}

function actorFromClaims(payload: JWTPayload): VerifiedActor {
  const { sub, tid, lvl, roles, azp, exp } = payload as JWTPayload & Record<string, unknown>;
  if (typeof sub !== "string" || sub.length === 0 || sub.length > 256) {
    throw unauthenticated("the actor token's `sub` claim (user id) must be a non-empty string of at most 256 characters");
  }
  if (typeof tid !== "string" || tid.length === 0 || tid.length > 128) {
    throw unauthenticated("the actor token's `tid` claim (tenant) must be a non-empty string of at most 128 characters");
  }
  if (typeof lvl !== "number" || !Number.isInteger(lvl) || lvl < 0 || lvl > 3) {
    throw unauthenticated("the actor token's `lvl` claim (verification level) must be an integer from 0 to 3");
  }
  if (
    roles !== undefined &&
    (!Array.isArray(roles) ||
      roles.length > MAX_ROLES ||
      roles.some((role) => typeof role !== "string" || role.length === 0 || role.length > 128))
  ) {
    throw unauthenticated(`the actor token's \`roles\` claim must be an array of at most ${MAX_ROLES} non-empty strings`);
  }
  if (azp !== undefined && (typeof azp !== "string" || azp.length === 0)) {
    throw unauthenticated("the actor token's `azp` claim must be a plugin id when present");
  }
  const actor: ActorInfo = Object.freeze({
    userId: sub,
    verificationLevel: lvl,
    roles: Object.freeze([...((roles as string[] | undefined) ?? [])]),
  });
  const verified: VerifiedActor = { tenantId: tid, actor, expiresAt: Number(exp) * 1000 };
  return Object.freeze(azp === undefined ? verified : { ...verified, authorizedParty: azp as string });
}

function jwksAlgorithms(keys: readonly object[]): string[] {
  const algorithms = new Set<string>();
  for (const key of keys) {
    const jwk = key as { alg?: unknown; kty?: unknown; crv?: unknown };
    if (typeof jwk.alg === "string") {
      if ((ASYMMETRIC_ALGS as readonly string[]).includes(jwk.alg)) algorithms.add(jwk.alg);
    } else if (jwk.kty === "RSA") {
      algorithms.add("RS256");
    } else if (jwk.kty === "EC" && jwk.crv === "P-256") {
      algorithms.add("ES256");
    } else if (jwk.kty === "OKP" && jwk.crv === "Ed25519") {
      algorithms.add("EdDSA");
    }
  }
  return [...algorithms];
}

function describeJoseFailure(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return "the actor token has expired: get a fresh one from the identity service";
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case "iss":
        return "the actor token's `iss` is not the configured issuer";
      case "aud":
        return 'the actor token\'s `aud` must be "toolpact"';
      case "exp":
        return "the actor token has no valid `exp` claim: actor tokens must expire";
      case "sub":
        return "the actor token has no `sub` claim (user id)";
      case "nbf":
        return "the actor token is not valid yet (`nbf` is in the future)";
      case "iat":
        return "the actor token's `iat` is invalid";
      default:
        return `the actor token's \`${error.claim}\` claim is invalid`;
    }
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return "the actor token's `alg` is not the algorithm this host accepts";
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return "the actor token's signature does not verify";
  if (error instanceof joseErrors.JWKSNoMatchingKey) return "the actor token was signed with a key the JWKS does not hold";
  if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid) {
    return "the identity service's JWKS could not be fetched or read";
  }
  if (error instanceof joseErrors.JOSENotSupported) return "the actor token uses an unsupported algorithm or key";
  return "the actor token is not a well-formed JWT";
}

function unauthenticated(message: string, cause?: unknown): ToolpactError {
  return new ToolpactError("UNAUTHENTICATED", message, {}, cause === undefined ? undefined : { cause });
}
