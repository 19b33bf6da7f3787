/**
 * A wait for the user's decision must not outlive the actor token it is made with: the server would hold
 * the long poll for its whole round and only the next one would learn that the token expired. The token's
 * `exp` is read without verifying the token (the server verifies it; this only decides when to stop).
 */
import { ToolpactError } from "@toolpact/protocol";

/** A token that expires sooner than this is not worth a wait: it fails at once. */
export const ACTOR_TOKEN_EXPIRY_MARGIN_MS = 2_000;
/** Longest timer a JavaScript engine keeps (about 24.8 days); a token living longer needs none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** When an actor token expires (ms since the epoch), from its JWT payload's `exp`; undefined when it names none. */
export function actorTokenExpiry(token: string): number | undefined {
  const payload = token.split(".")[1];
  if (payload === undefined || payload === "") return undefined;
  try {
    const claims = JSON.parse(decodeBase64Url(payload)) as { exp?: unknown } | null;
    const exp = claims?.exp;
    return typeof exp === "number" && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** A running watch on a token's expiry during one wait round. */
export interface ExpiryWatch {
  /** Aborts when the token expires. */
  readonly signal: AbortSignal;
  /** The error to reject the wait with once `signal` aborted. */
  expired(): ToolpactError;
  /** Stops the watch. */
  stop(): void;
}

/**
 * Watches the expiry of the actor token a wait for confirmation request `requestId` is made with.
 * Undefined when the token names no expiry.
 * @throws ToolpactError UNAUTHENTICATED when the token expired, or expires within the margin.
 */
export function watchExpiry(token: string, requestId: string): ExpiryWatch | undefined {
  const expiresAt = actorTokenExpiry(token);
  if (expiresAt === undefined) return undefined;
  const left = expiresAt - Date.now();
  if (left < ACTOR_TOKEN_EXPIRY_MARGIN_MS) {
    const when = left <= 0 ? `expired at ${isoOf(expiresAt)}` : `expires at ${isoOf(expiresAt)}, in under ${ACTOR_TOKEN_EXPIRY_MARGIN_MS / 1000} s`;
    throw expiredError(`the actor token ${when}, so confirm cannot wait for the user's decision on confirmation request ${requestId}`, requestId);
  }
  const controller = new AbortController();
  const timer = left <= MAX_TIMER_MS ? setTimeout(() => controller.abort(), left) : undefined;
  return {
    signal: controller.signal,
    expired: () =>
      expiredError(
        `the actor token expired at ${isoOf(expiresAt)} while confirm waited for the user's decision on confirmation request ${requestId}`,
        requestId,
      ),
    stop: () => clearTimeout(timer),
  };
}

function expiredError(what: string, requestId: string): ToolpactError {
  return new ToolpactError(
    "UNAUTHENTICATED",
    `${what}: mint a fresh actor token for the user (from the platform's identity service; in development, toolpact token), ` +
      "give it to the transport (an actorToken function is asked before every request), and call confirm again with the same " +
      "preview: the request stays open until it expires",
    { requestId },
  );
}

function isoOf(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
}

/** base64url to text (UTF-8), in browsers and Node alike. */
function decodeBase64Url(text: string): string {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  return new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)));
}
