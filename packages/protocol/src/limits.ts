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
/** The longest confirmation token (a compact JWS) a caller may send. */
export const CONFIRMATION_TOKEN_MAX_LENGTH = 8192;
/** The longest actor or presence token (a compact JWS) accepted. */
export const ACTOR_TOKEN_MAX_LENGTH = 8192;
/** The longest activity-page cursor a caller hands back. */
export const ACTIVITY_CURSOR_MAX_LENGTH = 1024;
/** How long shutdown waits for requests and calls in flight, ms (the HTTP server and the runtime alike). */
export const DEFAULT_DRAIN_TIMEOUT_MS = 15_000;
/** 1 MiB: the largest request body accepted unless configured otherwise. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/**
 * The deepest nesting of a request body unless configured otherwise: room for the default input depth
 * (64) inside the request's own envelope. Checked while the body streams in, before any parse.
 */
export const DEFAULT_MAX_BODY_DEPTH = 128;
/** How much deeper than a tool input its request body may nest (the envelope: `{ "input": ... }`, JSON-RPC `params.arguments`, a batch). */
export const BODY_ENVELOPE_DEPTH = 8;
/** How much of a refused body is read and dropped (so that the client sees the answer) before the connection is cut. */
export const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
/** Requests one caller (plugin key) may have in flight at once unless configured otherwise. */
export const DEFAULT_MAX_REQUESTS_PER_CALLER = 128;
/** Long polls (`confirmations.wait`, MCP streams) one caller may hold open at once unless configured otherwise. */
export const DEFAULT_MAX_LONG_POLLS_PER_CALLER = 32;
