/**
 * Verifying OAuth 2.1 access tokens for this resource server: a JWT (RFC 9068) against its issuer's JWKS,
 * or an opaque token at the issuer's introspection endpoint (RFC 7662) when one is configured. Either way
 * the issuer must be configured, the audience must be this resource (RFC 8707), and the token live.
 * Refusals are UNAUTHENTICATED with the check that failed; the token itself is never in a message.
 */
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { ToolpactError } from "@toolpact/contract";
import { createIssuerDiscovery, type IssuerMetadata } from "./issuer-metadata.js";
import type { OAuthConfig, OAuthIssuerConfig } from "./oauth-config.js";

/** The signature algorithms accepted: asymmetric only (never `none`, never an HMAC, which a public key could forge). */
export const ACCEPTED_ALGORITHMS: readonly string[] = Object.freeze([
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
]);

/**
 * The `typ` an access token may carry: RFC 9068's `at+jwt`, or the plain `JWT` (or none) many
 * providers still send. Any other (an ID token marked as one, a logout token, ...) is not an access token.
 */
const ACCESS_TOKEN_TYPES: ReadonlySet<string> = new Set(["jwt", "at+jwt", "application/at+jwt"]);

/** A token that verified: the issuer it came from and its claims. */
export interface VerifiedAccessToken {
  readonly issuer: OAuthIssuerConfig;
  readonly claims: Readonly<Record<string, unknown>>;
}

/** How long one introspection request may take, ms. */
const INTROSPECTION_TIMEOUT_MS = 5_000;

interface IssuerKeys {
  readonly config: OAuthIssuerConfig;
  readonly metadata: () => Promise<IssuerMetadata>;
  keys?: JWTVerifyGetKey;
}

/** Verifies access tokens for `resource` from the configured issuers. */
export function createAccessTokenVerifier(config: OAuthConfig, resource: string): (token: string) => Promise<VerifiedAccessToken> {
  const issuers = new Map<string, IssuerKeys>(
    config.issuers.map((issuer) => [issuer.issuer, { config: issuer, metadata: createIssuerDiscovery(issuer.issuer) }]),
  );
  const introspecting = [...issuers.values()].filter((issuer) => issuer.config.introspection !== undefined);
  const clockTolerance = config.clockToleranceSeconds;

  const keysOf = async (issuer: IssuerKeys): Promise<JWTVerifyGetKey> => {
    if (issuer.keys !== undefined) return issuer.keys;
    const url = issuer.config.jwksUrl ?? (await issuer.metadata().catch(unavailable)).jwksUri;
    if (url === undefined) throw unavailable(new Error(`issuer ${issuer.config.issuer} publishes no jwks_uri: set "jwksUrl" for it in oauth.issuers`));
    // jose keeps the set, and fetches it again for an unknown key id at most once per cooldown.
    issuer.keys = createRemoteJWKSet(new URL(url), { cooldownDuration: issuer.config.jwksCooldownSeconds * 1000 });
    return issuer.keys;
  };

  const verifyJwt = async (token: string): Promise<VerifiedAccessToken> => {
    let alg: unknown;
    let typ: unknown;
    let iss: unknown;
    try {
      ({ alg, typ } = decodeProtectedHeader(token));
      iss = decodeJwt(token).iss;
    } catch {
      throw refused("the access token is not a well-formed JWT");
    }
    if (typeof alg !== "string" || !ACCEPTED_ALGORITHMS.includes(alg)) {
      throw refused(`the access token is signed with alg ${JSON.stringify(alg)}: only asymmetric algorithms are accepted (${ACCEPTED_ALGORITHMS.join(", ")})`);
    }
    if (typ !== undefined && (typeof typ !== "string" || !ACCESS_TOKEN_TYPES.has(typ.toLowerCase()))) {
      throw refused(`the token's typ ${JSON.stringify(typ)} is not an access token's (at+jwt): send the access token, not an ID or other token`);
    }
    const issuer = typeof iss === "string" ? issuers.get(iss) : undefined;
    if (issuer === undefined) {
      throw refused(
        `the access token's issuer ${JSON.stringify(iss)} is not one this server accepts: add it to oauth.issuers, or get a token from one of those`,
      );
    }
    const keys = await keysOf(issuer);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: issuer.config.issuer,
        audience: resource,
        algorithms: [...ACCEPTED_ALGORITHMS],
        clockTolerance,
        requiredClaims: ["exp"],
      }));
    } catch (error) {
      throw refused(jwtProblem(error, resource));
    }
    return { issuer: issuer.config, claims: payload };
  };

  const introspect = async (token: string): Promise<VerifiedAccessToken> => {
    if (introspecting.length === 0) {
      throw refused("the access token is not a JWT, and no issuer in oauth.issuers has introspection configured for opaque tokens");
    }
    for (const issuer of introspecting) {
      const claims = await introspectAt(issuer, token);
      if (claims !== undefined) return { issuer: issuer.config, claims: checkIntrospected(issuer.config, claims, resource, clockTolerance) };
    }
    throw refused("the access token is not active at any introspecting issuer (expired, revoked or unknown)");
  };

  return (token) => (token.split(".").length === 3 ? verifyJwt(token) : introspect(token));
}

/** The introspection answer of an active token at one issuer, or undefined when it says inactive. */
async function introspectAt(issuer: IssuerKeys, token: string): Promise<Record<string, unknown> | undefined> {
  const settings = issuer.config.introspection!;
  const endpoint = settings.endpoint ?? (await issuer.metadata().catch(unavailable)).introspectionEndpoint;
  if (endpoint === undefined) {
    throw unavailable(new Error(`issuer ${issuer.config.issuer} publishes no introspection_endpoint: set oauth.issuers[].introspection.endpoint`));
  }
  const basic = Buffer.from(`${encodeURIComponent(settings.clientId)}:${encodeURIComponent(settings.clientSecret)}`).toString("base64");
  let answer: unknown;
  try {
    const response = await fetch(endpoint, {
      method: "POST",
      headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({ token, token_type_hint: "access_token" }),
      signal: AbortSignal.timeout(INTROSPECTION_TIMEOUT_MS),
      redirect: "error",
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    answer = await response.json();
  } catch (error) {
    throw unavailable(new Error(`introspection at ${endpoint} failed: ${(error as Error).message}`));
  }
  if (typeof answer !== "object" || answer === null || (answer as { active?: unknown }).active !== true) return undefined;
  return answer as Record<string, unknown>;
}

/** The checks a JWT's verification makes, for an introspected token: issuer, audience, expiry. */
function checkIntrospected(issuer: OAuthIssuerConfig, claims: Record<string, unknown>, resource: string, clockTolerance: number): Record<string, unknown> {
  if (claims.iss !== undefined && claims.iss !== issuer.issuer)
    throw refused(`the introspected token's issuer ${JSON.stringify(claims.iss)} is not ${issuer.issuer}`);
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audiences.includes(resource)) throw refused(`the access token is not for this resource: its audience (aud) must be ${resource}`);
  const now = Date.now() / 1000;
  if (typeof claims.exp === "number" && claims.exp + clockTolerance <= now) throw refused("the access token expired: get a new one");
  if (typeof claims.nbf === "number" && claims.nbf - clockTolerance > now) throw refused("the access token is not valid yet (nbf)");
  return claims;
}

/** What a failed JWT verification means, for the caller. */
function jwtProblem(error: unknown, resource: string): string {
  if (error instanceof joseErrors.JWTExpired) return "the access token expired: get a new one";
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === "aud")
      return `the access token is not for this resource: its audience (aud) must be ${resource} (ask for it with the resource parameter, RFC 8707)`;
    if (error.claim === "nbf") return "the access token is not valid yet (nbf)";
    return `the access token's "${error.claim}" claim is not acceptable: ${error.reason === "missing" ? "it is missing" : "it does not check"}`;
  }
  if (error instanceof joseErrors.JWKSNoMatchingKey) return "the access token is signed with a key its issuer does not publish (unknown or retired kid)";
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return "the access token's signature does not verify";
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return "the access token's signature algorithm is not accepted";
  if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid) return "the issuer's keys could not be fetched: retry later";
  return "the access token did not verify";
}

function refused(reason: string): ToolpactError {
  return new ToolpactError("UNAUTHENTICATED", reason);
}

/** The issuer could not be asked (metadata, keys, introspection): a failure of the moment, not of the token. */
function unavailable(error: Error): never {
  throw new ToolpactError("STORE_UNAVAILABLE", `the authorization server could not be reached to check the access token: ${error.message}; retry later`);
}
