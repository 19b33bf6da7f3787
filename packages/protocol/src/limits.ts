/**
 * Limits that both the HTTP router's input checks and the runtime enforce: one home, imported by both,
 * so an adapter and the core never disagree about what a valid request is.
 */

/** The longest id a caller hands back (run, confirmation request, operation, plugin key, outbox item). */
export const ID_MAX_LENGTH = 128;
/** The longest tenant id (admin procedures name the tenant they administer). */
export const TENANT_ID_MAX_LENGTH = 128;
/** An idempotency key is 1 to this many characters. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 256;
/** A run allows 1 to this many tool patterns. */
export const RUN_ALLOW_MAX = 1000;
/** A run lives 1 s to this many seconds (7 days). */
export const RUN_TTL_MAX_SECONDS = 7 * 24 * 60 * 60;
/** The longest one `confirmations.wait` round waits for a decision, ms. */
export const MAX_CONFIRMATION_WAIT_MS = 25_000;
/** The most events one activity page holds. */
export const MAX_ACTIVITY_PAGE = 1000;
/** One outbox claim takes 1 to this many items; one acknowledgement names at most this many. */
export const OUTBOX_BATCH_MAX = 1000;
/** An outbox claim holds 1 s to this many seconds. */
export const OUTBOX_LEASE_MAX_SECONDS = 3600;
/** A name in a policy list (callers, users, roles, trusted confirmation UIs) is 1 to this many characters. */
export const POLICY_NAME_MAX_LENGTH = 256;
/** A tool pattern (policy rules, runs, `narrow`, recovery rules) is 1 to this many characters. */
export const TOOL_PATTERN_MAX_LENGTH = 512;
/** A policy or recovery policy holds at most this many rules, and a policy list (callers, users, ...) this many names. */
export const POLICY_LIST_MAX = 10_000;
/** A recovery rule re-invokes an operation at most this many times. */
export const RECOVERY_ATTEMPTS_MAX = 100;
/** Verification levels run from 0 to this. */
export const MAX_VERIFICATION_LEVEL = 3;
/** A confirmation token lives this many seconds at least. */
export const CONFIRMATION_TTL_MIN_SECONDS = 30;
/** A confirmation token lives this many seconds at most. */
export const CONFIRMATION_TTL_MAX_SECONDS = 900;
