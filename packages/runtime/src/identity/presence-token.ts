/**
 * The presence token's own claims: who signs in to the confirmation page, for how long, and, when the
 * identity service names one, the one confirmation request the sign-in is for. The signature, issuer,
 * audience and times are checked beside actor tokens (`ActorTokenVerifier.verifyPresence`).
 */
import { ACTOR_TOKEN_MAX_LENGTH, ToolpactError } from "@toolpact/contract";
import { isIssuedId } from "../caller-ids.js";
import { isNameClaim, nameClaimMessage } from "./name-claims.js";

/** `aud` of presence tokens: the confirmation page's sign-in. */
export const PRESENCE_AUDIENCE = "toolpact-presence";
/** The longest a presence token may live (`exp - iat`), in seconds. */
export const PRESENCE_MAX_TTL_SECONDS = 600;
/** The claim naming the one confirmation request a presence token signs in for. */
export const PRESENCE_REQUEST_CLAIM = "cfr";

/** A person a presence token signs in. */
export interface VerifiedPresence {
  readonly tenantId: string;
  readonly userId: string;
  /** `jti`: the presence token's id; a token signs in once. */
  readonly tokenId: string;
  /** `exp`, in Unix milliseconds. */
  readonly expiresAt: number;
  /** `cfr`: the only confirmation request the session may see and decide, when the token names one. */
  readonly requestId?: string;
}

const PRESENCE_JTI = /^[A-Za-z0-9][A-Za-z0-9._:-]{7,127}$/;
const SKEW_SECONDS = 5;

/** Refuses an empty or oversized presence token before any parse. */
export function checkPresenceTokenSize(token: unknown): asserts token is string {
  if (typeof token !== "string" || token.length === 0 || token.length > ACTOR_TOKEN_MAX_LENGTH) {
    throw unauthenticated("no presence token: the identity service sends the browser to /confirm/session with one");
  }
}

/**
 * The person a presence token's verified payload names: `sub`, `tid`, `jti`, a lifetime (`exp - iat`) of
 * at most 600 s, no `iat` in the future, and an optional `cfr` (a confirmation request id).
 * @throws ToolpactError UNAUTHENTICATED naming the claim that is wrong.
 */
export function presenceFromClaims(payload: Record<string, unknown>, nowMs: number): VerifiedPresence {
  const { sub, tid, iat, exp, jti } = payload;
  const requestId = payload[PRESENCE_REQUEST_CLAIM];
  if (!isNameClaim(sub, 256)) throw unauthenticated(nameClaimMessage("presence token", "sub", "user id", 256));
  if (!isNameClaim(tid, 128)) throw unauthenticated(nameClaimMessage("presence token", "tid", "tenant", 128));
  if (typeof jti !== "string" || !PRESENCE_JTI.test(jti)) {
    throw unauthenticated(
      "the presence token's `jti` claim must be a unique id of 8 to 128 letters, digits, '-', '_', '.' or ':': each presence token is used once",
    );
  }
  if (typeof iat !== "number" || typeof exp !== "number" || exp - iat > PRESENCE_MAX_TTL_SECONDS) {
    throw unauthenticated(
      `the presence token lives longer than ${PRESENCE_MAX_TTL_SECONDS} s (exp - iat): the identity service must issue short-lived presence tokens`,
    );
  }
  if (iat > nowMs / 1000 + SKEW_SECONDS) throw unauthenticated("the presence token was issued in the future (`iat`)");
  if (requestId !== undefined && !isIssuedId(requestId)) {
    throw unauthenticated(
      `the presence token's \`${PRESENCE_REQUEST_CLAIM}\` claim must be the id of one confirmation request (as its confirmUrl ends), when present`,
    );
  }
  const verified = { tenantId: tid, userId: sub, tokenId: jti, expiresAt: exp * 1000 };
  return Object.freeze(requestId === undefined ? verified : { ...verified, requestId });
}

function unauthenticated(message: string): ToolpactError {
  return new ToolpactError("UNAUTHENTICATED", message);
}
