import { hkdfSync, randomUUID } from "node:crypto";
import {
  CONFIRMATION_TTL_MAX_SECONDS,
  CONFIRMATION_TTL_MIN_SECONDS,
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_INPUT_LIMITS,
  MAX_CONFIRMATION_WAIT_MS,
  withoutUndefined,
  type InputLimits,
} from "@toolpact/contract";
import type { ActorTokenConfig } from "./identity/actor-token.js";
import { silentLogger, type Logger } from "./logger.js";
import { checkSecrets, type SigningKey } from "./secrets.js";
import { resolveAuditOptions, type AuditOptions } from "./audit/audit-options.js";
import { deriveAuditKey, type AuditKey } from "./audit/checkpoint-key.js";
import type { Store } from "./store/store.js";

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The defaults of `retention` and of the idempotency window: their one home (the options below, the HTTP
 * host's config schema and docs/operating.md's table follow it; a test compares the doc).
 */
export const RETENTION_DEFAULTS = Object.freeze({
  activityDays: 90,
  confirmationHours: 24,
  outboxDays: 7,
  operationDays: 90,
  idempotencyHours: 24,
  pruneIntervalMs: 60 * 60 * 1000,
});

/** How long kept rows live; `prune` (and the periodic pruning job) removes older ones. */
export interface RetentionOptions {
  /** Activity events older than this many days are deleted (default `RETENTION_DEFAULTS.activityDays`, 90). */
  readonly activityDays?: number;
  /** How often the pruning job runs, in ms (default `RETENTION_DEFAULTS.pruneIntervalMs`, one hour; 0 turns it off). */
  readonly pruneIntervalMs?: number;
  /** Confirmation requests and runs are deleted this many hours after they expired (default `RETENTION_DEFAULTS.confirmationHours`, 24). */
  readonly confirmationHours?: number;
  /** Outbox rows not acknowledged after this many days are deleted (default `RETENTION_DEFAULTS.outboxDays`, 7). */
  readonly outboxDays?: number;
  /**
   * Settled operations (their state and error code, what `tools.operation` answers) are deleted this many
   * days after they began (default `RETENTION_DEFAULTS.operationDays`, 90); a running one never is. At least the idempotency TTL.
   */
  readonly operationDays?: number;
}

/** Per (tenant, caller, actor) limits; past them a call is RATE_LIMITED with `retryAfterMs`. */
export interface RateLimitOptions {
  /** Previews per minute (default 120). */
  readonly previewsPerMinute?: number;
  /** Platform confirmation requests pending at once (default 20). */
  readonly pendingConfirmations?: number;
}

/** Options of `createRuntime`. */
export interface RuntimeOptions {
  readonly store: Store;
  /** The first signs confirmation tokens, all verify (`parseSigningKeys`). */
  readonly signingKeys: readonly SigningKey[];
  /** 32 bytes: AES-256-GCM for payloads the store keeps. */
  readonly storageKey: Uint8Array;
  /** How actor tokens are verified: HS256 secret or JWKS (RS256/ES256/EdDSA); alg pinned. */
  readonly actorTokens: ActorTokenConfig;
  /** Base URL of this runtime, for confirmation links (platform mode). */
  readonly publicUrl?: string;
  /** Confirmation token lifetime, 30..900 s (default 300). */
  readonly confirmationTtlSeconds?: number;
  /** Names this host as lease owner (default: a random UUID). */
  readonly instanceId?: string;
  readonly logger?: Logger;
  readonly inputLimits?: Partial<InputLimits>;
  /** How long an operation lease lasts without renewal, ms (default 30000; renewed every third of it). */
  readonly leaseMs?: number;
  /** How long `close()` waits for in-flight calls, ms (default 15000, DEFAULT_DRAIN_TIMEOUT_MS). */
  readonly drainTimeoutMs?: number;
  /** How long idempotency keys are remembered, ms (default 24 h). */
  readonly idempotencyTtlMs?: number;
  /**
   * How long a tenant's config (installs, policy) is used before the store is asked whether it changed,
   * ms (default 1000). Changes made through this runtime apply at once; an execute always checks the
   * version in its begin transaction, so no effect runs under a stale config whatever this is.
   */
  readonly configRefreshMs?: number;
  readonly retention?: RetentionOptions;
  readonly rateLimits?: RateLimitOptions;
  /**
   * How often this instance settles operations whose lease expired, ms (default half of `leaseMs`; 0 turns
   * the timers off). The first pass runs 1 s after creation; hosts also call `settleExpiredLeases()` once
   * they have loaded their plugins.
   */
  readonly recoveryIntervalMs?: number;
  /**
   * How often a waiting `waitConfirmation` reads the store while decisions made elsewhere cannot be heard,
   * ms (default 1000): another process on the same SQLite file, or another instance while PostgreSQL's
   * LISTEN connection is down. Decisions the store announces wake waiters at once.
   */
  readonly confirmationPollMs?: number;
  /**
   * The longest one `waitConfirmation` round holds, ms (default and most: 25000, `MAX_CONFIRMATION_WAIT_MS`,
   * the wire limit clients are built for). Tests shorten it so a full round takes a moment.
   */
  readonly maxConfirmationWaitMs?: number;
  /** The activity checkpoint job (`toolpact audit`): how often, and over events how old. */
  readonly audit?: AuditOptions;
  /** The clock (Unix ms); tests move it to exercise expiry. */
  readonly clock?: () => number;
  /** What the runtime's OpenTelemetry traces hold, when an SDK is registered (docs/observability.md). */
  readonly telemetry?: TelemetryOptions;
}

/** What a traced call records. */
export interface TelemetryOptions {
  /**
   * A child span per step of the call's chain (default true). False records the call's span only (one span
   * per call instead of about fifteen: the cost of exporting every trace falls to a few percent); the
   * call's attributes, its metrics and the `traceparent` handed to providers (then the call's span) stay.
   */
  readonly stepSpans?: boolean;
}

/** Options resolved once, every default filled in. */
export interface RuntimeContext {
  readonly store: Store;
  readonly signingKeys: readonly SigningKey[];
  readonly storageKey: Uint8Array;
  /** HKDF(storage key, "toolpact-idempotency"): digests of inputs kept with idempotency keys. */
  readonly idempotencyDigestKey: Uint8Array;
  readonly actorTokens: ActorTokenConfig;
  readonly publicUrl: string | undefined;
  readonly confirmationTtlSeconds: number;
  readonly instanceId: string;
  readonly logger: Logger;
  readonly inputLimits: InputLimits;
  readonly leaseMs: number;
  readonly drainTimeoutMs: number;
  readonly idempotencyTtlMs: number;
  readonly configRefreshMs: number;
  readonly activityRetentionMs: number;
  readonly pruneIntervalMs: number;
  readonly confirmationRetentionMs: number;
  readonly outboxRetentionMs: number;
  readonly operationRetentionMs: number;
  readonly previewsPerMinute: number;
  readonly pendingConfirmations: number;
  readonly recoveryIntervalMs: number;
  readonly confirmationPollMs: number;
  readonly maxConfirmationWaitMs: number;
  /** Signs activity checkpoints: HKDF(storage key, AUDIT_KEY_INFO), Ed25519. */
  readonly auditKey: AuditKey;
  readonly audit: ReturnType<typeof resolveAuditOptions>;
  readonly clock: () => number;
}

/** Checks options and secrets and fills in defaults. */
export function resolveOptions(options: RuntimeOptions): RuntimeContext {
  if (options.store === undefined || options.store === null) {
    throw new TypeError("createRuntime needs a store: createSqliteStore({ path }) or a PostgreSQL store");
  }
  checkSecrets({
    signingKeys: options.signingKeys,
    storageKey: options.storageKey,
    actorSecret: options.actorTokens?.secret,
  });
  const ttl = options.confirmationTtlSeconds ?? 300;
  if (!Number.isInteger(ttl) || ttl < CONFIRMATION_TTL_MIN_SECONDS || ttl > CONFIRMATION_TTL_MAX_SECONDS) {
    throw new TypeError(`confirmationTtlSeconds must be an integer from ${CONFIRMATION_TTL_MIN_SECONDS} to ${CONFIRMATION_TTL_MAX_SECONDS}; got ${ttl}`);
  }
  const limits: InputLimits = { ...DEFAULT_INPUT_LIMITS, ...withoutUndefined(options.inputLimits ?? {}) };
  if (!(limits.maxBytes > 0) || !(limits.maxDepth > 0)) {
    throw new TypeError("inputLimits.maxBytes and inputLimits.maxDepth must be positive");
  }
  const leaseMs = options.leaseMs ?? 30_000;
  if (!(leaseMs >= 1000)) throw new TypeError(`leaseMs must be at least 1000; got ${leaseMs}`);
  const activityDays = options.retention?.activityDays ?? RETENTION_DEFAULTS.activityDays;
  if (!(activityDays > 0)) throw new TypeError(`retention.activityDays must be positive; got ${activityDays}`);
  const confirmationHours = options.retention?.confirmationHours ?? RETENTION_DEFAULTS.confirmationHours;
  if (!(confirmationHours >= 0)) throw new TypeError(`retention.confirmationHours must be 0 or more; got ${confirmationHours}`);
  const outboxDays = options.retention?.outboxDays ?? RETENTION_DEFAULTS.outboxDays;
  if (!(outboxDays > 0)) throw new TypeError(`retention.outboxDays must be positive; got ${outboxDays}`);
  const idempotencyTtlMs = options.idempotencyTtlMs ?? RETENTION_DEFAULTS.idempotencyHours * 60 * 60 * 1000;
  const operationDays = options.retention?.operationDays ?? RETENTION_DEFAULTS.operationDays;
  if (!(operationDays > 0 && operationDays * DAY_MS >= idempotencyTtlMs)) {
    throw new TypeError(
      `retention.operationDays must be positive and keep operations at least as long as idempotency keys (${idempotencyTtlMs / DAY_MS} days): ` +
        `a replayed key names its operation; got ${operationDays}`,
    );
  }
  const previewsPerMinute = options.rateLimits?.previewsPerMinute ?? 120;
  const pendingConfirmations = options.rateLimits?.pendingConfirmations ?? 20;
  for (const [name, value] of [
    ["rateLimits.previewsPerMinute", previewsPerMinute],
    ["rateLimits.pendingConfirmations", pendingConfirmations],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) throw new TypeError(`${name} must be a positive integer; got ${value}`);
  }
  const recoveryIntervalMs = options.recoveryIntervalMs ?? Math.floor(leaseMs / 2);
  if (!(recoveryIntervalMs >= 0)) throw new TypeError(`recoveryIntervalMs must be 0 or more; got ${recoveryIntervalMs}`);
  const confirmationPollMs = options.confirmationPollMs ?? 1000;
  if (!(confirmationPollMs >= 10)) throw new TypeError(`confirmationPollMs must be at least 10; got ${confirmationPollMs}`);
  const maxConfirmationWaitMs = options.maxConfirmationWaitMs ?? MAX_CONFIRMATION_WAIT_MS;
  if (!Number.isInteger(maxConfirmationWaitMs) || maxConfirmationWaitMs < 1 || maxConfirmationWaitMs > MAX_CONFIRMATION_WAIT_MS) {
    throw new TypeError(`maxConfirmationWaitMs must be an integer from 1 to ${MAX_CONFIRMATION_WAIT_MS}; got ${maxConfirmationWaitMs}`);
  }
  return {
    store: options.store,
    signingKeys: options.signingKeys,
    storageKey: options.storageKey,
    idempotencyDigestKey: new Uint8Array(hkdfSync("sha256", options.storageKey, new Uint8Array(0), "toolpact-idempotency", 32)),
    auditKey: deriveAuditKey(options.storageKey),
    audit: resolveAuditOptions(options.audit),
    actorTokens: options.actorTokens,
    publicUrl: options.publicUrl,
    confirmationTtlSeconds: ttl,
    instanceId: options.instanceId ?? randomUUID(),
    logger: options.logger ?? silentLogger,
    inputLimits: Object.freeze(limits),
    leaseMs,
    drainTimeoutMs: options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS,
    idempotencyTtlMs,
    configRefreshMs: Math.max(0, options.configRefreshMs ?? 1000),
    activityRetentionMs: activityDays * DAY_MS,
    pruneIntervalMs: options.retention?.pruneIntervalMs ?? RETENTION_DEFAULTS.pruneIntervalMs,
    confirmationRetentionMs: confirmationHours * 60 * 60 * 1000,
    outboxRetentionMs: outboxDays * DAY_MS,
    operationRetentionMs: operationDays * DAY_MS,
    previewsPerMinute,
    pendingConfirmations,
    recoveryIntervalMs,
    confirmationPollMs,
    maxConfirmationWaitMs,
    clock: options.clock ?? Date.now,
  };
}
