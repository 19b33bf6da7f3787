import { compactVerify, createLocalJWKSet, createRemoteJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";
import { ACTOR_TOKEN_MAX_LENGTH, ToolpactError, type ActorInfo } from "@toolpact/contract";
import { Hs256Key, JwsError, readJwsHeader, type JwsHeader } from "../tokens/compact-jws.js";
import { isNameClaim, nameClaimMessage, type TokenKind } from "./name-claims.js";
import { checkPresenceTokenSize, PRESENCE_AUDIENCE, PRESENCE_MAX_TTL_SECONDS, presenceFromClaims, type VerifiedPresence } from "./presence-token.js";

/** How actor tokens are checked: the platform identity service's issuer and its HS256 secret or JWKS. */
export interface ActorTokenConfig {
  readonly issuer: string;
  /** HS256 shared secret (at least 32 bytes). */
  readonly secret?: Uint8Array;
  /** Public keys (RS256, ES256 or EdDSA), inline or fetched from a URL. */
  readonly jwks?: { readonly keys: readonly object[] } | URL;
  /**
   * The longest an actor token may live, in seconds (default 86400, one day; 60 to 2592000): both
   * `exp - iat` and `exp - now` must stay within it, so a token minted to last for years is refused.
   */
  readonly maxLifetimeSeconds?: number;
}

/** `actorTokens.maxLifetimeSeconds` when not set: one day. */
export const DEFAULT_ACTOR_MAX_LIFETIME_SECONDS = 24 * 60 * 60;
/** The most `actorTokens.maxLifetimeSeconds` may be: 30 days. */
export const ACTOR_MAX_LIFETIME_CEILING_SECONDS = 30 * 24 * 60 * 60;
/** `typ` values an actor or presence token may carry (compared case-insensitively); no `typ` is fine too. */
export const ACCEPTED_TOKEN_TYPES: readonly string[] = ["jwt", "at+jwt", "application/jwt", "application/at+jwt"];

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
const ASYMMETRIC_ALGS = ["RS256", "ES256", "EdDSA"] as const;
const SKEW_SECONDS = 5;
const CACHE_LIMIT = 10_000;
const MAX_ROLES = 64;
/** A `kid` names a key: 1 to 256 visible ASCII characters. */
const KID = /^[\x21-\x7E]{1,256}$/;

/** The checks that differ between actor and presence tokens. */
interface TokenChecks {
  readonly kind: TokenKind;
  readonly audience: string;
  /** Claims that must be present, beyond `exp` and `sub`. */
  readonly required: readonly string[];
  /** The longest the token may live (`exp - iat` and `exp - now`), in seconds. */
  readonly maxLifetimeSeconds: number;
  /** The `typ` values it may carry (lowercase); no `typ` is fine too. */
  readonly types: readonly string[];
}

const PRESENCE_CHECKS: TokenChecks = {
  kind: "presence token",
  audience: PRESENCE_AUDIENCE,
  required: ["iat", "jti"],
  maxLifetimeSeconds: PRESENCE_MAX_TTL_SECONDS,
  types: ACCEPTED_TOKEN_TYPES,
};

/**
 * Verifies actor tokens (JWT): header `alg` pinned (HS256 with a secret, else the JWKS's algorithms),
 * `typ` absent or a JWT type, `kid` absent or a short visible name; then `iss`, `aud: "toolpact"`, `exp`
 * (5 s skew), a lifetime within `maxLifetimeSeconds`, no `iat` in the future, and the claims `sub`,
 * `tid`, `lvl`, optional `roles` and `azp`.
 * HS256 is checked synchronously on node:crypto (fast-jwt); a JWKS is read and checked through jose,
 * which fetches, caches and rotates remote key sets. Every token's segments must be canonical base64url.
 * A verified token is remembered until it expires, so a busy caller does not pay for the signature twice.
 */
export class ActorTokenVerifier {
  readonly #issuer: string;
  readonly #secret: Hs256Key | undefined;
  readonly #jwks: JWTVerifyGetKey | undefined;
  readonly #algorithms: readonly string[];
  readonly #clock: () => number;
  readonly #actorChecks: TokenChecks;
  readonly #cache = new Map<string, VerifiedActor>();

  private constructor(parts: {
    issuer: string;
    secret?: Hs256Key;
    jwks?: JWTVerifyGetKey;
    algorithms: string[];
    clock: () => number;
    maxLifetimeSeconds: number;
  }) {
    this.#issuer = parts.issuer;
    this.#secret = parts.secret;
    this.#jwks = parts.jwks;
    this.#algorithms = parts.algorithms;
    this.#clock = parts.clock;
    this.#actorChecks = {
      kind: "actor token",
      audience: ACTOR_AUDIENCE,
      required: [],
      maxLifetimeSeconds: parts.maxLifetimeSeconds,
      types: ACCEPTED_TOKEN_TYPES,
    };
  }

  /** Prepares the configured key once. */
  static async create(config: ActorTokenConfig, clock: () => number): Promise<ActorTokenVerifier> {
    if (typeof config.issuer !== "string" || config.issuer === "") {
      throw new TypeError("actorTokens.issuer is required: the `iss` your identity service puts in actor tokens");
    }
    if ((config.secret === undefined) === (config.jwks === undefined)) {
      throw new TypeError("actorTokens needs exactly one of `secret` (HS256) or `jwks` (RS256, ES256, EdDSA)");
    }
    const common = { issuer: config.issuer, clock, maxLifetimeSeconds: actorMaxLifetime(config.maxLifetimeSeconds) };
    if (config.secret !== undefined) {
      // Hs256Key refuses a secret shorter than 32 bytes, naming the fix.
      return new ActorTokenVerifier({ ...common, secret: new Hs256Key(config.secret, {}, "actorTokens.secret"), algorithms: ["HS256"] });
    }
    const jwks = config.jwks!;
    if (jwks instanceof URL) {
      return new ActorTokenVerifier({ ...common, jwks: createRemoteJWKSet(jwks), algorithms: [...ASYMMETRIC_ALGS] });
    }
    const algorithms = jwksAlgorithms(jwks.keys);
    if (algorithms.length === 0) {
      throw new TypeError("actorTokens.jwks has no RS256, ES256 or EdDSA key: symmetric or unknown keys are not accepted");
    }
    return new ActorTokenVerifier({ ...common, jwks: createLocalJWKSet(jwks as unknown as JSONWebKeySet), algorithms });
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
    const actor = actorFromClaims(await this.#claimsOf(token, this.#actorChecks));
    if (this.#cache.size >= CACHE_LIMIT) {
      const oldest = this.#cache.keys().next();
      if (!oldest.done) this.#cache.delete(oldest.value);
    }
    this.#cache.set(token, actor);
    return actor;
  }

  /**
   * Verifies a presence token: the same issuer and keys as actor tokens, `aud: "toolpact-presence"`,
   * and the claims `presenceFromClaims` checks (`sub`, `tid`, `jti`, `iat`, `exp`, a lifetime of at most
   * 600 s, an optional `cfr`). Single use (the `jti`) is the store's to decide.
   * @throws ToolpactError UNAUTHENTICATED naming the check that failed.
   */
  async verifyPresence(token: string): Promise<VerifiedPresence> {
    checkPresenceTokenSize(token);
    return presenceFromClaims(await this.#claimsOf(token, PRESENCE_CHECKS), this.#clock());
  }

  /** The claims of a token whose header, signature, issuer, audience and times check out. */
  async #claimsOf(token: string, checks: TokenChecks): Promise<Record<string, unknown>> {
    const { kind } = checks;
    let header: JwsHeader;
    try {
      header = readJwsHeader(token);
    } catch (error) {
      throw unauthenticated(
        error instanceof JwsError && error.failure === "non-canonical"
          ? `the ${kind} is not canonical base64url (a segment was re-encoded): send it exactly as it was issued`
          : `the ${kind} is not a well-formed JWT`,
      );
    }
    if (typeof header.alg !== "string" || !this.#algorithms.includes(header.alg)) {
      throw unauthenticated(`the ${kind}'s \`alg\` is not the algorithm this host accepts`);
    }
    if (header.crit !== undefined) throw unauthenticated(`the ${kind} carries critical header parameters this host does not know`);
    if (header.typ !== undefined && (typeof header.typ !== "string" || !checks.types.includes(header.typ.toLowerCase()))) {
      throw unauthenticated(`the ${kind}'s \`typ\` must be "JWT" or "at+jwt" when present: this is another kind of token`);
    }
    if (header.kid !== undefined && (typeof header.kid !== "string" || !KID.test(header.kid))) {
      throw unauthenticated(`the ${kind}'s \`kid\` must be a key name of 1 to 256 visible ASCII characters when present`);
    }
    let payload: Record<string, unknown>;
    if (this.#secret !== undefined) {
      try {
        payload = this.#secret.claimsOf(token);
      } catch (error) {
        throw unauthenticated(
          error instanceof JwsError && error.failure === "malformed" ? `the ${kind} is not a well-formed JWT` : `the ${kind}'s signature does not verify`,
        );
      }
    } else {
      try {
        payload = (await compactVerifyWithJwks(token, this.#jwks!, this.#algorithms)) as Record<string, unknown>;
      } catch (error) {
        throw unauthenticated(describeJoseFailure(error, kind), error);
      }
    }
    const failure = registeredClaimsFailure(payload, { ...checks, issuer: this.#issuer, nowSeconds: this.#clock() / 1000 });
    if (failure !== undefined) throw unauthenticated(failure);
    return payload;
  }
}

/** What is wrong with a token's `iss`, `aud`, `exp`, `nbf`, `iat` and required claims, if anything. */
function registeredClaimsFailure(
  payload: Record<string, unknown>,
  checks: TokenChecks & { readonly issuer: string; readonly nowSeconds: number },
): string | undefined {
  const { kind, audience, issuer, nowSeconds } = checks;
  const { iss, aud, exp, nbf, iat, sub } = payload;
  if (iss !== issuer) return `the ${kind}'s \`iss\` is not the configured issuer`;
  if (!(aud === audience || (Array.isArray(aud) && aud.includes(audience)))) return `the ${kind}'s \`aud\` must be "${audience}"`;
  if (typeof exp !== "number" || !Number.isFinite(exp)) return `the ${kind} has no valid \`exp\` claim: ${kind}s must expire`;
  if (nowSeconds > exp + SKEW_SECONDS) {
    return kind === "actor token" ? "the actor token has expired: get a fresh one from the identity service" : "the presence token has expired";
  }
  if (nbf !== undefined && (typeof nbf !== "number" || nbf > nowSeconds + SKEW_SECONDS)) return `the ${kind} is not valid yet (\`nbf\` is in the future)`;
  if (iat !== undefined && (typeof iat !== "number" || !Number.isFinite(iat))) return `the ${kind}'s \`iat\` is invalid`;
  if (typeof iat === "number" && iat > nowSeconds + SKEW_SECONDS) return `the ${kind} was issued in the future (\`iat\`): check the identity service's clock`;
  const { maxLifetimeSeconds } = checks;
  if ((typeof iat === "number" && exp - iat > maxLifetimeSeconds) || exp - nowSeconds > maxLifetimeSeconds + SKEW_SECONDS) {
    return `the ${kind} lives longer than ${maxLifetimeSeconds} s (exp - iat, or exp - now): the identity service must issue shorter-lived tokens`;
  }
  if (sub === undefined) return `the ${kind} has no \`sub\` claim (user id)`;
  for (const claim of checks.required) if (payload[claim] === undefined) return `the ${kind} has no \`${claim}\` claim`;
  return undefined;
}

/** jose's JWS check against a JWKS, without its claim checks (done above, alike for both key kinds). */
async function compactVerifyWithJwks(token: string, jwks: JWTVerifyGetKey, algorithms: readonly string[]): Promise<unknown> {
  const { payload } = await compactVerify(token, jwks, { algorithms: [...algorithms] });
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload).toString("utf8"));
  } catch {
    throw new joseErrors.JWTInvalid("the payload is not JSON");
  }
  if (typeof claims !== "object" || claims === null || Array.isArray(claims)) throw new joseErrors.JWTInvalid("the payload is not a JSON object");
  return claims;
}

function actorFromClaims(payload: Record<string, unknown>): VerifiedActor {
  const { sub, tid, lvl, roles, azp, exp } = payload;
  if (!isNameClaim(sub, 256)) throw unauthenticated(nameClaimMessage("actor token", "sub", "user id", 256));
  if (!isNameClaim(tid, 128)) throw unauthenticated(nameClaimMessage("actor token", "tid", "tenant", 128));
  if (typeof lvl !== "number" || !Number.isInteger(lvl) || lvl < 0 || lvl > 3) {
    throw unauthenticated("the actor token's `lvl` claim (verification level) must be an integer from 0 to 3");
  }
  if (roles !== undefined && (!Array.isArray(roles) || roles.length > MAX_ROLES || roles.some((role) => !isNameClaim(role, 128)))) {
    throw unauthenticated(
      `the actor token's \`roles\` claim must be an array of at most ${MAX_ROLES} non-empty strings of at most 128 characters, without control characters`,
    );
  }
  if (azp !== undefined && !isNameClaim(azp, 256)) {
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

/** `maxLifetimeSeconds`, checked, or the default. */
function actorMaxLifetime(value: number | undefined): number {
  if (value === undefined) return DEFAULT_ACTOR_MAX_LIFETIME_SECONDS;
  if (!Number.isInteger(value) || value < 60 || value > ACTOR_MAX_LIFETIME_CEILING_SECONDS) {
    throw new TypeError(`actorTokens.maxLifetimeSeconds must be an integer from 60 to ${ACTOR_MAX_LIFETIME_CEILING_SECONDS} (30 days); got ${String(value)}`);
  }
  return value;
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

/** What a JWKS check through jose found wrong (the claims are checked after it, alike for both key kinds). */
function describeJoseFailure(error: unknown, kind: TokenKind): string {
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return `the ${kind}'s \`alg\` is not the algorithm this host accepts`;
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return `the ${kind}'s signature does not verify`;
  if (error instanceof joseErrors.JWKSNoMatchingKey) return `the ${kind} was signed with a key the JWKS does not hold`;
  if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid) {
    return "the identity service's JWKS could not be fetched or read";
  }
  if (error instanceof joseErrors.JOSENotSupported) return `the ${kind} uses an unsupported algorithm or key`;
  return `the ${kind} is not a well-formed JWT`;
}

function unauthenticated(message: string, cause?: unknown): ToolpactError {
  return new ToolpactError("UNAUTHENTICATED", message, {}, cause === undefined ? undefined : { cause });
}
