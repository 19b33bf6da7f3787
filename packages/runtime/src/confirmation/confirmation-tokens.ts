import { hkdfSync, randomUUID } from "node:crypto";
import { ToolpactError, inputDigest, type Effect } from "@toolpact/contract";
import type { SigningKey } from "../secrets.js";
import { Hs256Key, JwsError, readJwsHeader, type JwsHeader } from "../tokens/compact-jws.js";
import { BOUND_CALL_CLAIMS, type BoundCall, type ConfirmationBinding } from "./binding.js";

/** `typ` of every confirmation token. */
export const CONFIRMATION_TOKEN_TYPE = "toolpact-confirm+jwt";
/** `aud` of every confirmation token. */
export const CONFIRMATION_AUDIENCE = "toolpact-confirmation";
/** Clock skew tolerated on `exp` and `iat`, in seconds. */
export const CONFIRMATION_SKEW_SECONDS = 5;

/** The claims of a confirmation token. */
export interface ConfirmationClaims {
  readonly jti: string;
  readonly iat: number;
  readonly exp: number;
  readonly aud: string;
  readonly tid: string;
  readonly sub: string;
  readonly cpl: string;
  readonly prv: string;
  readonly tol: string;
  readonly ver: number;
  readonly sch: string;
  readonly dig: string;
  readonly eff: Effect;
  readonly mod: "token" | "platform";
  readonly run?: string;
}

/** What an approved platform-mode request's token carries: its bound call, fixed id and times, and digest. */
export interface ApprovedConfirmation extends BoundCall {
  readonly tokenId: string;
  /** Unix ms. */
  readonly issuedAt: number;
  readonly expiresAt: number;
  readonly digest: string;
  readonly digestKid: string;
}

/** A minted token. */
export interface MintedConfirmation {
  readonly token: string;
  readonly tokenId: string;
  /** Unix milliseconds. */
  readonly expiresAt: number;
}

/** A token that passed every check except "used" (the store decides that, in the begin transaction). */
export interface VerifiedConfirmation {
  readonly tokenId: string;
  /** How it was confirmed: by the calling UI (`token`) or on the platform's page (`platform`). */
  readonly mode: "token" | "platform";
  /** Unix milliseconds. */
  readonly expiresAt: number;
}

interface KeyMaterial {
  readonly kid: string;
  readonly signKey: Hs256Key;
  readonly digestKey: Uint8Array;
}

/** The digest key of a signing key: HKDF-SHA256, info "toolpact-digest". */
export function deriveDigestKey(signingKey: Uint8Array): Uint8Array {
  return new Uint8Array(hkdfSync("sha256", signingKey, new Uint8Array(0), "toolpact-digest", 32));
}

/**
 * Mints and checks confirmation tokens: compact JWS, HS256 (synchronous, node:crypto through fast-jwt),
 * header `kid` and `typ`. The first signing key signs; every configured key verifies. Checks run in the
 * designed order: alg/typ/kid, signature, expiry (5 s skew), binding claims. Single use is the store's job.
 */
export class ConfirmationTokens {
  readonly #keys: ReadonlyMap<string, KeyMaterial>;
  readonly #signer: KeyMaterial;
  readonly #ttlSeconds: number;
  readonly #clock: () => number;

  private constructor(parts: { keys: Map<string, KeyMaterial>; signer: KeyMaterial; ttlSeconds: number; clock: () => number }) {
    this.#keys = parts.keys;
    this.#signer = parts.signer;
    this.#ttlSeconds = parts.ttlSeconds;
    this.#clock = parts.clock;
  }

  /** Prepares every signing key once. */
  static create(keys: readonly SigningKey[], ttlSeconds: number, clock: () => number): ConfirmationTokens {
    const material = new Map<string, KeyMaterial>();
    for (const key of keys) {
      const signKey = new Hs256Key(key.key, { kid: key.kid, typ: CONFIRMATION_TOKEN_TYPE });
      material.set(key.kid, { kid: key.kid, signKey, digestKey: deriveDigestKey(key.key) });
    }
    const first = keys[0];
    if (first === undefined) throw new TypeError("at least one signing key is required");
    return new ConfirmationTokens({ keys: material, signer: material.get(first.kid)!, ttlSeconds, clock });
  }

  /** Mints a token bound to `binding`, valid for the configured TTL. */
  async mint(binding: ConfirmationBinding): Promise<MintedConfirmation> {
    const iat = Math.floor(this.#clock() / 1000);
    const exp = iat + this.#ttlSeconds;
    const tokenId = randomUUID();
    const claims = claimsOf(binding, { jti: tokenId, iat, exp, dig: inputDigest(this.#signer.digestKey, binding.input), mod: binding.mode });
    return { token: this.#signer.signKey.sign(claims), tokenId, expiresAt: exp * 1000 };
  }

  /** The `dig` a token for `input` will carry, and the kid of the key it was made with (platform requests keep both). */
  digest(input: unknown): { digest: string; kid: string } {
    return { digest: inputDigest(this.#signer.digestKey, input), kid: this.#signer.kid };
  }

  /**
   * The token of an approved platform-mode request: its id is the request id and its times are fixed at
   * approval, so every fetch gives the same token and the approval is usable once. Signed with the key
   * whose digest key made `digest` (while this host still holds it).
   */
  async mintApproved(approved: ApprovedConfirmation): Promise<string> {
    const key = this.#keys.get(approved.digestKid) ?? this.#signer;
    const claims = claimsOf(approved, {
      jti: approved.tokenId,
      iat: Math.floor(approved.issuedAt / 1000),
      exp: Math.floor(approved.expiresAt / 1000),
      dig: approved.digest,
      mod: "platform",
    });
    return key.signKey.sign(claims);
  }

  /**
   * Checks a token against the call in hand.
   * @throws ToolpactError CONFIRMATION_INVALID (malformed, alg/typ/kid, signature), CONFIRMATION_EXPIRED,
   *   or CONFIRMATION_MISMATCH naming what differs.
   */
  async verify(token: string, binding: ConfirmationBinding, tool: string): Promise<VerifiedConfirmation> {
    let header: JwsHeader;
    try {
      header = readJwsHeader(token);
    } catch (error) {
      throw invalid(
        tool,
        error instanceof JwsError && error.failure === "non-canonical"
          ? "it is not canonical base64url (a segment was re-encoded); use the token exactly as it was issued"
          : "it is not a compact JWS (three base64url segments)",
      );
    }
    if (header.alg !== "HS256") throw invalid(tool, `its alg must be HS256, not ${JSON.stringify(header.alg ?? null)}`);
    if (header.typ !== CONFIRMATION_TOKEN_TYPE) throw invalid(tool, `its typ must be "${CONFIRMATION_TOKEN_TYPE}"`);
    if (header.crit !== undefined) throw invalid(tool, "it carries critical header parameters this runtime does not know");
    const key = typeof header.kid === "string" ? this.#keys.get(header.kid) : undefined;
    if (key === undefined) throw invalid(tool, "it names a signing key (kid) this runtime does not hold");

    let payload: Record<string, unknown>;
    try {
      payload = key.signKey.claimsOf(token);
    } catch (error) {
      throw invalid(tool, error instanceof JwsError && error.failure === "malformed" ? "its payload is not a JSON object" : "its signature does not verify");
    }
    const claims = checkClaims(payload, tool);

    const nowSeconds = this.#clock() / 1000;
    if (nowSeconds > claims.exp + CONFIRMATION_SKEW_SECONDS) {
      throw new ToolpactError(
        "CONFIRMATION_EXPIRED",
        `the confirmation for ${tool} expired at ${new Date(claims.exp * 1000).toISOString()}: preview again to get a new one`,
        { tool },
      );
    }
    if (claims.iat > nowSeconds + CONFIRMATION_SKEW_SECONDS) throw invalid(tool, "it was issued in the future");

    const mismatch = firstMismatch(claims, binding, key.digestKey);
    if (mismatch !== undefined) {
      throw new ToolpactError(
        "CONFIRMATION_MISMATCH",
        `the confirmation token does not match this call to ${tool}: ${mismatch}; preview this exact call again`,
        { tool },
      );
    }
    return { tokenId: claims.jti, mode: claims.mod, expiresAt: claims.exp * 1000 };
  }
}

/** The claims of a token for `bound`: the one mapping of a bound call to claims, for both modes. */
function claimsOf(bound: BoundCall, token: Pick<ConfirmationClaims, "jti" | "iat" | "exp" | "dig" | "mod">): Record<string, unknown> {
  const claims: Record<string, unknown> = { jti: token.jti, iat: token.iat, exp: token.exp, aud: CONFIRMATION_AUDIENCE };
  for (const [field, claim] of BOUND_FIELDS) {
    if (bound[field] !== undefined) claims[claim] = bound[field];
  }
  return { ...claims, dig: token.dig, mod: token.mod };
}

/** The bound call's fields with their claims, in the order a mismatch is reported. */
const BOUND_FIELDS = Object.entries(BOUND_CALL_CLAIMS) as [keyof BoundCall, string][];
/** Claims every token carries as a string: the bound call's (but `ver`, a number, and `run`, optional) and the token's own. */
const STRING_CLAIMS = ["jti", ...BOUND_FIELDS.filter(([field]) => field !== "version" && field !== "runId").map(([, claim]) => claim), "dig", "mod"];

function checkClaims(claims: Record<string, unknown>, tool: string): ConfirmationClaims {
  for (const name of STRING_CLAIMS) {
    if (typeof claims[name] !== "string") throw invalid(tool, `its \`${name}\` claim is missing`);
  }
  for (const name of ["iat", "exp", BOUND_CALL_CLAIMS.version] as const) {
    if (typeof claims[name] !== "number" || !Number.isFinite(claims[name])) throw invalid(tool, `its \`${name}\` claim is missing`);
  }
  if (claims.aud !== CONFIRMATION_AUDIENCE) throw invalid(tool, `its aud must be "${CONFIRMATION_AUDIENCE}"`);
  if (claims[BOUND_CALL_CLAIMS.runId] !== undefined && typeof claims[BOUND_CALL_CLAIMS.runId] !== "string") {
    throw invalid(tool, "its `run` claim is malformed");
  }
  return claims as unknown as ConfirmationClaims;
}

/** What a token bound to another value of each field says (the field's claim is in BOUND_CALL_CLAIMS). */
const MISMATCH: { readonly [TField in keyof BoundCall]-?: (claim: unknown, call: BoundCall) => string } = {
  tenantId: () => "it was issued in another tenant",
  actorUserId: () => "it was issued to another user",
  callerPluginId: () => "it was issued to another caller plugin",
  providerId: () => "it was issued for another tool",
  tool: () => "it was issued for another tool",
  version: (claim, call) => `it was issued for version ${String(claim)}, not ${call.version}`,
  schemaHash: () => "the tool's input schema changed since preview",
  effect: () => "the tool's effect changed since preview",
  runId: () => "it was issued for another run",
};

function firstMismatch(claims: ConfirmationClaims, binding: ConfirmationBinding, digestKey: Uint8Array): string | undefined {
  const carried = claims as unknown as Record<string, unknown>;
  for (const [field, claim] of BOUND_FIELDS) {
    if (field === "runId") continue; // after the mode, as before: a run mismatch is the lesser news
    if (carried[claim] !== binding[field]) return MISMATCH[field](carried[claim], binding);
  }
  // Platform mode (the user saw the runtime's page) satisfies a call that token mode would; never the reverse.
  if (claims.mod !== binding.mode && !(claims.mod === "platform" && binding.mode === "token")) {
    return `it was confirmed in ${claims.mod} mode, and policy now demands ${binding.mode} mode (the user confirms on the platform's page)`;
  }
  if ((carried[BOUND_CALL_CLAIMS.runId] ?? undefined) !== binding.runId) return MISMATCH.runId(carried[BOUND_CALL_CLAIMS.runId], binding);
  if (claims.dig !== inputDigest(digestKey, binding.input)) return "the input differs from the previewed input";
  return undefined;
}

function invalid(tool: string, why: string): ToolpactError {
  return new ToolpactError("CONFIRMATION_INVALID", `the confirmation token for ${tool} is not valid: ${why}`, { tool });
}
