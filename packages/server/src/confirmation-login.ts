/**
 * The confirmation page's sign-in at the platform's OpenID provider: authorization code with PKCE
 * (S256), `state` bound to the browser by a sealed login cookie, `nonce` checked in the ID token, and
 * the ID token verified against the provider's keys (issuer, audience = client id, expiry, an allow-list
 * of asymmetric algorithms, keys from the JWKS its discovery document names).
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { TENANT_ID_MAX_LENGTH, ToolpactError } from "@toolpact/contract";
import { isNameClaim } from "@toolpact/runtime";
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from "jose";
import { DEFAULT_LOGIN_REDIRECT_PATH, DEFAULT_LOGIN_SCOPES } from "./confirmation-login-config.js";
import { cookieValue } from "./presence-session.js";

/** What the confirmation page's sign-in at an OpenID provider takes (`toolpact.config.json`'s `confirmationLogin`, with the secret read). */
export interface ConfirmationLoginOptions {
  /** The provider's issuer URL, exactly as its discovery document names it. */
  readonly issuer: string;
  readonly clientId: string;
  /** For a confidential client (`client_secret_basic`); without it the client is public and PKCE alone protects the code. */
  readonly clientSecret?: string;
  /** Below `/confirm/`; default `login/callback`. */
  readonly redirectPath?: string;
  /** Default `["openid"]`. */
  readonly scopes?: readonly string[];
  /** The ID token claim that names the tenant; or `tenant`, a fixed one. */
  readonly tenantClaim?: string;
  readonly tenant?: string;
  /** The ID token claim that names the tenant's user; default `sub`. */
  readonly userClaim?: string;
  /** Also accept presence tokens on the page; default false. */
  readonly presenceTokens?: boolean;
  /** Allow plain http to a provider that is not on this machine. Default false. */
  readonly insecure?: boolean;
}

/** Where the sign-in lives, as the routes resolved it. */
export interface LoginSetting {
  /** The absolute URL the provider sends the browser back to: `<page base>/confirm/<redirectPath>`. */
  readonly redirectUri: string;
  /** The login cookie's `Path` (the page's path, e.g. `/confirm`). */
  readonly cookiePath: string;
  /** Adds `Secure` and the `__Secure-` name prefix (an https page). */
  readonly secure: boolean;
  /** The confirmation-page session secret; the login cookie's key is derived from it. */
  readonly secret: Uint8Array;
  readonly clock: () => number;
}

/** Someone the provider signed in, mapped to the tenant's user. */
export interface SignedInPerson {
  readonly tenantId: string;
  readonly userId: string;
  /** The ID token's `sub`. */
  readonly subject: string;
  readonly issuer: string;
  /** The ID token's expiry, Unix ms: the page's session does not outlive it. */
  readonly expiresAt: number;
  /** Where the person was going (`/confirm/<id>`), when the sign-in started from a request's page. */
  readonly next?: string;
}

/** The confirmation page's relying party. */
export interface ConfirmationLogin {
  readonly issuer: string;
  /** The path below `/confirm/` that the provider sends the browser back to. */
  readonly redirectPath: string;
  /** Whether the page still signs people in with presence tokens. */
  readonly acceptsPresenceTokens: boolean;
  /** Starts a sign-in: the provider's authorization URL, and the login cookie that holds its state, nonce and PKCE verifier. */
  begin(next: string | undefined): Promise<{ readonly location: string; readonly setCookie: string }>;
  /**
   * Completes a sign-in on the provider's redirect back: the `state` must be the login cookie's, the code
   * is exchanged with its PKCE verifier, and the ID token must verify and carry the cookie's nonce.
   * @throws ToolpactError UNAUTHENTICATED or PERMISSION_DENIED saying what failed.
   */
  complete(query: URLSearchParams, cookieHeader: string | undefined): Promise<SignedInPerson>;
  /** The `Set-Cookie` value that removes the login cookie (every callback answer carries it: a state is used once). */
  readonly clearCookie: string;
}

/** Asymmetric signature algorithms an ID token may use: never `none`, never an HMAC keyed with something public. */
export const ID_TOKEN_ALGORITHMS: readonly string[] = Object.freeze(["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]);

const LOGIN_TTL_SECONDS = 600;
/** The longest user id, as actor and presence tokens allow it. */
const USER_ID_MAX_LENGTH = 256;
const CLOCK_TOLERANCE_SECONDS = 30;
const PROVIDER_TIMEOUT_MS = 10_000;
const MAX_PROVIDER_ANSWER_BYTES = 256 * 1024;
const MAX_LOGIN_COOKIE = 2048;
const MAX_PARAM = 4096;

/** The provider's discovery document, the parts a relying party uses. */
interface ProviderMetadata {
  readonly authorizationEndpoint: URL;
  readonly tokenEndpoint: URL;
  readonly jwks: ReturnType<typeof createRemoteJWKSet>;
}

/** What the login cookie keeps between the redirect to the provider and the way back. */
interface LoginState {
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
  readonly next: string | undefined;
  readonly expiresAt: number;
}

/** Creates the relying party; throws TypeError for a configuration it cannot use. */
export function createConfirmationLogin(options: ConfirmationLoginOptions, setting: LoginSetting): ConfirmationLogin {
  const issuer = options.issuer;
  requireSafeTransport(new URL(issuer), "issuer", options.insecure);
  if ((options.tenant === undefined) === (options.tenantClaim === undefined)) {
    throw new TypeError("confirmationLogin: give exactly one of tenant (a fixed tenant) and tenantClaim (the ID token claim that names it)");
  }
  const scopes = options.scopes ?? DEFAULT_LOGIN_SCOPES;
  if (!scopes.includes("openid")) throw new TypeError('confirmationLogin: scopes must include "openid"');
  const userClaim = options.userClaim ?? "sub";
  const { clock } = setting;
  const key = Buffer.from(hkdfSync("sha256", setting.secret, new Uint8Array(0), "toolpact-confirm-login-state", 32));
  const cookieName = setting.secure ? "__Secure-toolpact-confirm-login" : "toolpact-confirm-login";
  const attributes = (maxAge: number) => `Path=${setting.cookiePath}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${setting.secure ? "; Secure" : ""}`;

  let discovered: Promise<ProviderMetadata> | undefined;
  const metadata = (): Promise<ProviderMetadata> =>
    (discovered ??= discover(issuer, options.insecure).catch((error: unknown) => {
      discovered = undefined; // asked again on the next sign-in
      throw error;
    }));

  const seal = (login: LoginState): string => {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    const plain = JSON.stringify([login.state, login.nonce, login.verifier, login.next ?? null, login.expiresAt]);
    const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString("base64url");
  };

  const unseal = (value: string | undefined): LoginState | undefined => {
    if (value === undefined || value.length > MAX_LOGIN_COOKIE) return undefined;
    const bytes = Buffer.from(value, "base64url");
    if (bytes.byteLength < 12 + 16 + 2) return undefined;
    let fields: unknown;
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, 12));
      decipher.setAuthTag(bytes.subarray(bytes.byteLength - 16));
      const plain = Buffer.concat([decipher.update(bytes.subarray(12, bytes.byteLength - 16)), decipher.final()]).toString("utf8");
      fields = JSON.parse(plain);
    } catch {
      return undefined;
    }
    if (!Array.isArray(fields) || fields.length !== 5) return undefined;
    const [state, nonce, verifier, next, expiresAt] = fields as unknown[];
    if (typeof state !== "string" || typeof nonce !== "string" || typeof verifier !== "string") return undefined;
    if ((next !== null && typeof next !== "string") || typeof expiresAt !== "number" || !(expiresAt > clock())) return undefined;
    return { state, nonce, verifier, next: next ?? undefined, expiresAt };
  };

  const exchange = async (provider: ProviderMetadata, code: string, verifier: string): Promise<string> => {
    const form = new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: setting.redirectUri, code_verifier: verifier });
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
    if (options.clientSecret === undefined) form.set("client_id", options.clientId);
    else headers.authorization = `Basic ${Buffer.from(`${formEncode(options.clientId)}:${formEncode(options.clientSecret)}`).toString("base64")}`;
    const response = await providerFetch(provider.tokenEndpoint, { method: "POST", headers, body: form });
    const answer = await readJson(response, "token endpoint");
    if (!response.ok) {
      const error = typeof answer?.error === "string" ? answer.error : `HTTP ${response.status}`;
      // invalid_grant: the code was used already, expired, or was issued for another verifier or redirect.
      throw new ToolpactError(
        "UNAUTHENTICATED",
        `the sign-in provider refused this sign-in's code (${error.slice(0, 64)}): a code is used once and expires quickly; sign in again`,
      );
    }
    const idToken = answer?.id_token;
    if (typeof idToken !== "string" || idToken.length === 0) {
      throw new ToolpactError("UNAUTHENTICATED", "the sign-in provider answered without an ID token: check that the openid scope is granted to this client");
    }
    return idToken;
  };

  const verifyIdToken = async (provider: ProviderMetadata, idToken: string, nonce: string): Promise<JWTPayload> => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, provider.jwks, {
        issuer,
        audience: options.clientId,
        algorithms: [...ID_TOKEN_ALGORITHMS],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ["sub", "exp", "iat", "nonce"],
        currentDate: new Date(clock()),
      }));
    } catch (error) {
      throw new ToolpactError("UNAUTHENTICATED", `the sign-in's ID token did not verify (${idTokenProblem(error)}): sign in again`);
    }
    if (typeof payload.sub !== "string" || payload.sub.length === 0) {
      throw new ToolpactError("UNAUTHENTICATED", "the sign-in's ID token names no subject (sub): sign in again");
    }
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== options.clientId) {
      throw new ToolpactError("UNAUTHENTICATED", "the sign-in's ID token was issued to another client (azp): sign in again");
    }
    if (typeof payload.nonce !== "string" || !sameText(payload.nonce, nonce)) {
      throw new ToolpactError(
        "UNAUTHENTICATED",
        "the sign-in's ID token carries another nonce than this sign-in asked for: it was not made for this sign-in; sign in again",
      );
    }
    return payload;
  };

  const personOf = (payload: JWTPayload): Omit<SignedInPerson, "next"> => {
    const userId = payload[userClaim];
    if (!isNameClaim(userId, USER_ID_MAX_LENGTH)) {
      throw new ToolpactError(
        "UNAUTHENTICATED",
        `the sign-in's ID token has no usable "${userClaim}" claim to name the user (a string of 1 to ${USER_ID_MAX_LENGTH} characters, no control characters): ` +
          "ask the operator to check confirmationLogin.userClaim",
      );
    }
    const tenantId = options.tenant ?? payload[options.tenantClaim ?? ""];
    if (!isNameClaim(tenantId, TENANT_ID_MAX_LENGTH)) {
      throw new ToolpactError(
        "UNAUTHENTICATED",
        `the sign-in's ID token has no usable "${options.tenantClaim}" claim to name the tenant (a string of 1 to ${TENANT_ID_MAX_LENGTH} characters, no control characters): ` +
          "ask the operator to check confirmationLogin.tenantClaim",
      );
    }
    return { tenantId, userId, subject: payload.sub ?? "", issuer, expiresAt: (payload.exp ?? 0) * 1000 };
  };

  return {
    issuer,
    redirectPath: options.redirectPath ?? DEFAULT_LOGIN_REDIRECT_PATH,
    acceptsPresenceTokens: options.presenceTokens === true,
    clearCookie: `${cookieName}=; ${attributes(0)}`,
    async begin(next) {
      const provider = await metadata();
      const login: LoginState = {
        state: randomBytes(32).toString("base64url"),
        nonce: randomBytes(32).toString("base64url"),
        verifier: randomBytes(32).toString("base64url"),
        next,
        expiresAt: clock() + LOGIN_TTL_SECONDS * 1000,
      };
      const location = new URL(provider.authorizationEndpoint);
      location.searchParams.set("response_type", "code");
      location.searchParams.set("client_id", options.clientId);
      location.searchParams.set("redirect_uri", setting.redirectUri);
      location.searchParams.set("scope", scopes.join(" "));
      location.searchParams.set("state", login.state);
      location.searchParams.set("nonce", login.nonce);
      location.searchParams.set("code_challenge", createHash("sha256").update(login.verifier, "ascii").digest("base64url"));
      location.searchParams.set("code_challenge_method", "S256");
      return { location: location.href, setCookie: `${cookieName}=${seal(login)}; ${attributes(LOGIN_TTL_SECONDS)}` };
    },
    async complete(query, cookieHeader) {
      const login = unseal(cookieValue(cookieHeader, cookieName));
      const state = query.get("state");
      if (login === undefined || state === null || state.length > MAX_PARAM || !sameText(state, login.state)) {
        throw new ToolpactError(
          "PERMISSION_DENIED",
          "this sign-in was not started in this browser, or was already completed or expired (its state does not match): open the confirmation link from your app and sign in again",
        );
      }
      const error = query.get("error");
      if (error !== null) {
        throw new ToolpactError(
          "UNAUTHENTICATED",
          `the sign-in provider did not sign you in (${error.slice(0, 64)}): open the confirmation link and try again`,
        );
      }
      const code = query.get("code");
      if (code === null || code.length === 0 || code.length > MAX_PARAM) {
        throw new ToolpactError("UNAUTHENTICATED", "the sign-in provider sent no code back: open the confirmation link and sign in again");
      }
      // RFC 9207: a provider that names itself on the way back must be the configured one (mix-up defence).
      const iss = query.get("iss");
      if (iss !== null && iss !== issuer) {
        throw new ToolpactError("UNAUTHENTICATED", "the answer came from another sign-in provider than the configured one: sign in again");
      }
      const provider = await metadata();
      const payload = await verifyIdToken(provider, await exchange(provider, code, login.verifier), login.nonce);
      return { ...personOf(payload), ...(login.next === undefined ? {} : { next: login.next }) };
    },
  };
}

/** Reads the provider's discovery document and checks it names the configured issuer. */
async function discover(issuer: string, insecure: boolean | undefined): Promise<ProviderMetadata> {
  const url = new URL(`${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`);
  const response = await providerFetch(url, { headers: { accept: "application/json" } });
  const document = await readJson(response, "discovery document");
  if (!response.ok || document === undefined) throw new Error(`the sign-in provider's discovery document ${url.href} answered HTTP ${response.status}`);
  if (document.issuer !== issuer) {
    throw new Error(
      `the discovery document at ${url.href} names issuer ${JSON.stringify(document.issuer)}, not the configured ${JSON.stringify(issuer)}: fix confirmationLogin.issuer`,
    );
  }
  const endpoint = (name: string): URL => {
    const value = document[name];
    if (typeof value !== "string") throw new Error(`the discovery document at ${url.href} has no ${name}`);
    const parsed = new URL(value);
    requireSafeTransport(parsed, name, insecure);
    return parsed;
  };
  const methods = document.code_challenge_methods_supported;
  if (Array.isArray(methods) && !methods.includes("S256")) {
    throw new Error(`the sign-in provider ${issuer} does not support PKCE with S256 (code_challenge_methods_supported): toolpact signs in with it only`);
  }
  return {
    authorizationEndpoint: endpoint("authorization_endpoint"),
    tokenEndpoint: endpoint("token_endpoint"),
    jwks: createRemoteJWKSet(endpoint("jwks_uri"), { timeoutDuration: PROVIDER_TIMEOUT_MS }),
  };
}

/** A request to the provider: bounded in time, never following redirects (an answer must come from where discovery said). */
function providerFetch(url: URL, init: RequestInit): Promise<Response> {
  return fetch(url, { ...init, redirect: "error", signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS) }).catch((error: unknown) => {
    throw new Error(`could not reach the sign-in provider at ${url.origin}: ${(error as Error).message}`, { cause: error });
  });
}

/** A JSON object answer of bounded size, or undefined when it is none. */
async function readJson(response: Response, what: string): Promise<Record<string, unknown> | undefined> {
  const text = await response.text();
  if (text.length > MAX_PROVIDER_ANSWER_BYTES) throw new Error(`the sign-in provider's ${what} answer is larger than ${MAX_PROVIDER_ANSWER_BYTES} bytes`);
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * https anywhere, or http to this machine, unless `insecure`.
 * @throws TypeError naming the URL and what to do.
 */
export function requireSafeTransport(url: URL, what: string, insecure: boolean | undefined): void {
  if (url.protocol === "https:" || insecure === true) return;
  const host = url.hostname;
  if (url.protocol === "http:" && (host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host))) return;
  throw new TypeError(
    `confirmationLogin: the provider's ${what} ${url.href} is not https (nor http to this machine): sign-ins could be read or changed on the way; use https, or set "insecure": true if this network is trusted`,
  );
}

/** Why jose refused an ID token, in a few words (never the token). */
function idTokenProblem(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return "expired";
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `claim ${error.claim} ${error.reason}`;
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return "its signature algorithm is not allowed";
  if (error instanceof joseErrors.JWKSNoMatchingKey) return "no key of the provider matches it";
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return "its signature does not verify";
  if (error instanceof joseErrors.JOSEError) return error.code;
  return "the provider's keys could not be read";
}

/** Constant-time equality of two strings. */
function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  return left.byteLength === right.byteLength && timingSafeEqual(left, right);
}

/** RFC 6749 2.3.1: client id and secret are form-encoded before they go into Basic authentication. */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, "+");
}
