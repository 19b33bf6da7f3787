/** The records the store keeps and the requests its methods take (see `Store` in store.ts). */
import type { ConfirmationState } from "@toolpact/protocol";
import type { ActivityEvent, OperationState } from "../api.js";

/** A tenant's configuration as calls read it: plugin installs, the policy, activations and the recovery policy. */
export interface TenantConfigRecord {
  readonly tenantId: string;
  /** Grows with every install, enable/disable and policy change; 0 for a tenant never configured. */
  readonly version: number;
  readonly plugins: readonly PluginInstallRecord[];
  /** The policy as JSON text, or undefined when none was set. */
  readonly policy?: string;
  /** The pinned recovery policy as JSON text, or undefined when none was set. */
  readonly recoveryPolicy?: string;
  /** Which declared gates, hooks and guards act, per plugin (plugins without an activation are absent). */
  readonly activations: readonly ActivationRecord[];
}

/** One plugin's activated gates, hooks and guards for a tenant. */
export interface ActivationRecord {
  readonly pluginId: string;
  readonly gates: readonly string[];
  readonly hooks: readonly string[];
  readonly guards: readonly string[];
}

/** A plugin installed for a tenant. */
export interface PluginInstallRecord {
  readonly pluginId: string;
  readonly enabled: boolean;
  readonly installedAt: number;
}

/** A plugin key: only its SHA-256 is kept. */
export interface PluginKeyRecord {
  readonly keyId: string;
  readonly tenantId: string;
  readonly pluginId: string;
  readonly keyHash: Uint8Array;
  readonly createdAt: number;
  readonly revokedAt?: number;
}

/**
 * A plugin key as authentication reads it: with its tenant's config version read in the same snapshot.
 * Revoking a key moves that version, so while the tenant is still at `tenantConfigVersion` the key is
 * not revoked: a commit that checks the version checks the key too.
 */
export interface PluginKeyLookup extends PluginKeyRecord {
  readonly tenantConfigVersion: number;
}

/** A durable operation (the begin transaction creates it `running`, the settle settles it). */
export interface OperationRecord {
  readonly tenantId: string;
  readonly operationId: string;
  readonly callerPluginId: string;
  readonly actorUserId: string;
  readonly providerPluginId: string;
  /** The tool's full name. */
  readonly tool: string;
  readonly state: OperationState;
  readonly errorCode?: string;
  readonly createdAt: number;
  readonly settledAt?: number;
  readonly leaseOwner: string;
  readonly leaseEpoch: number;
  readonly leaseExpiresAt: number;
  /** The input, sealed, kept while running for tools that declare `recovery: "idempotent"`. */
  readonly sealedInput?: Uint8Array;
  /** How many times recovery took this operation over (0 for a new one). */
  readonly recoveryAttempts?: number;
}

/** Who an idempotency key belongs to: (tenant, caller, actor, tool full name, key). */
export interface IdempotencyScope {
  readonly tenantId: string;
  readonly callerPluginId: string;
  readonly actorUserId: string;
  readonly tool: string;
  /** SHA-256 of the caller's key (base64url): the key itself is not kept. */
  readonly keyHash: string;
}

/** An idempotency record: the digest it was first used with and, once settled, the outcome. */
export interface IdempotencyRecord extends IdempotencyScope {
  readonly inputDigest: string;
  readonly operationId: string;
  readonly state: OperationState;
  readonly errorCode?: string;
  /** The recorded result, sealed; only for `succeeded` without an error code. */
  readonly sealedResult?: Uint8Array;
  /**
   * The guards that passed the recorded result, `<pluginId>:<name>` in order, one per line ("" for none);
   * absent when not known (records older than this field). A replay under other guards runs today's.
   */
  readonly guardSet?: string;
  readonly createdAt: number;
  readonly expiresAt: number;
}

/** A consumed confirmation token id. */
export interface ConsumedTokenRecord {
  readonly tenantId: string;
  readonly tokenId: string;
  readonly operationId: string;
  readonly callerPluginId: string;
  readonly actorUserId: string;
  readonly consumedAt: number;
  /** The token's own expiry; the record may be pruned after it. */
  readonly expiresAt: number;
}

/** An activity event as stored: `at` in Unix milliseconds. */
export type ActivityRecord = Omit<ActivityEvent, "at"> & { readonly at: number };

/** The begin transaction: everything one execute writes before the provider runs, in one transaction. */
export interface OperationBegin {
  readonly operation: OperationRecord;
  /**
   * The tenant config version the authorization steps decided under. When the tenant's version differs, nothing is
   * written and the result is `config-changed`: no effect runs under a stale authorization.
   */
  readonly tenantConfigVersion?: number;
  readonly consumeToken?: Omit<ConsumedTokenRecord, "operationId" | "tenantId" | "callerPluginId" | "actorUserId">;
  readonly idempotency?: { readonly scope: IdempotencyScope; readonly inputDigest: string; readonly expiresAt: number };
  /**
   * The user grant that authorizes this call in place of a confirmation: one use is counted in this
   * transaction (`uses < max_calls`, live, same actor, caller, tool, version and schema hash), or nothing
   * is written and the result is `grant-ended`.
   */
  readonly useGrant?: GrantInBegin;
}

/** The grant a begin counts a use of; tenant, actor and caller are the operation's. */
export interface GrantInBegin {
  readonly grantId: string;
  /** `<providerPluginId>:<tool>`, without the version. */
  readonly tool: string;
  readonly version: number;
  readonly schemaHash: string;
}

/**
 * What the begin transaction did: started, or found the config changed, the token already used, the
 * idempotency key taken, or the grant ended (used up, revoked, expired, or for another version).
 */
export type OperationBeginResult =
  | { readonly status: "started" }
  | { readonly status: "grant-ended" }
  | { readonly status: "config-changed"; readonly version: number }
  | { readonly status: "token-used"; readonly consumed: ConsumedTokenRecord }
  | { readonly status: "idempotency-exists"; readonly record: IdempotencyRecord };

/**
 * The begin and the settle at once, for a `read` tool (no effect to recover, no token or key to take first): the
 * operation is written already settled, after its provider answered, with its events and staged
 * reactions, in one transaction; only while the tenant's config is still at `tenantConfigVersion`.
 */
export interface SettledOperationWrite {
  /** State `succeeded`, `failed` or `unknown`, with `settledAt`. */
  readonly operation: OperationRecord;
  readonly tenantConfigVersion?: number;
  readonly activity: ActivityRecord;
  readonly extraActivity?: readonly ActivityRecord[];
  readonly outbox?: readonly OutboxRecord[];
}

/** What `recordSettledOperation` did: recorded, or nothing because the tenant's config changed. */
export type SettledOperationResult = { readonly status: "recorded" } | { readonly status: "config-changed"; readonly version: number };

/** The settle: the operation's final state, its activity event and the idempotency outcome, guarded by the lease. */
export interface OperationSettle {
  readonly tenantId: string;
  readonly operationId: string;
  readonly leaseOwner: string;
  readonly leaseEpoch: number;
  readonly state: Exclude<OperationState, "running">;
  readonly errorCode?: string;
  readonly settledAt: number;
  readonly activity: ActivityRecord;
  /** More events committed with it (hook failures, guard withholds). */
  readonly extraActivity?: readonly ActivityRecord[];
  /** Reactions staged by AfterTool hooks, committed with it. */
  readonly outbox?: readonly OutboxRecord[];
  /**
   * The operation's idempotency record takes its outcome; without `scope` (recovery does not know the
   * key) the record is found by the operation id.
   */
  readonly idempotency?: { readonly scope?: IdempotencyScope; readonly sealedResult?: Uint8Array; readonly guardSet?: string };
}

/** A staged reaction waiting for delivery. */
export interface OutboxRecord {
  readonly tenantId: string;
  /** UUIDv7. */
  readonly id: string;
  readonly operationId: string;
  readonly tool: string;
  /** The hook that staged it, `<pluginId>:<name>`. */
  readonly hook: string;
  readonly kind: string;
  /** The payload's JSON, sealed. */
  readonly sealedPayload: Uint8Array;
  readonly createdAt: number;
  /** How many times it was claimed. */
  readonly attempts: number;
  /** Until when the last claim holds; absent when never claimed. */
  readonly claimedUntil?: number;
}

/** Enables or disables an installed plugin, at `now`. */
export interface PluginEnabledChange {
  readonly enabled: boolean;
  readonly now: number;
}

/** Which outbox rows one claim takes: at most `limit`, unclaimed or claim-expired at `now`, held until `claimUntil`. */
export interface OutboxClaimQuery {
  readonly limit: number;
  readonly now: number;
  readonly claimUntil: number;
}

/** A run: calls passing its id may use only the tools `allow` matches, until it closes or expires. */
export interface RunRecord {
  readonly tenantId: string;
  readonly runId: string;
  readonly callerPluginId: string;
  readonly actorUserId: string;
  readonly allow: readonly string[];
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly closedAt?: number;
}

/** The states of a platform-mode confirmation request (`CONFIRMATION_STATES`, in @toolpact/protocol). */
export type { ConfirmationState } from "@toolpact/protocol";

/** A platform-mode confirmation request. */
export interface ConfirmationRecord {
  readonly tenantId: string;
  /** Random, unguessable. */
  readonly requestId: string;
  /** The tool's full name. */
  readonly tool: string;
  readonly providerPluginId: string;
  readonly callerPluginId: string;
  readonly actorUserId: string;
  /** The input digest the token will carry (`dig`), and the kid of the key it was made with. */
  readonly digest: string;
  readonly digestKid: string;
  readonly schemaHash: string;
  readonly effect: "read" | "write" | "external";
  readonly mode: "platform";
  readonly runId?: string;
  readonly status: ConfirmationState;
  readonly createdAt: number;
  /** Until when it may be decided. */
  readonly expiresAt: number;
  readonly decidedAt?: number;
  /** The preview's summary and details, sealed; deleted once the request leaves `pending`. */
  readonly sealedPreview?: Uint8Array;
  /** Once approved: the `exp` of its token, Unix ms. */
  readonly tokenExpiresAt?: number;
}

/** What `createConfirmation` did: created, or refused because the (tenant, caller, actor) has too many pending. */
export type ConfirmationCreateResult =
  | { readonly status: "created" }
  | { readonly status: "rate-limited" /** When the oldest pending one expires. */; readonly retryAt: number };

/**
 * What a platform preview looks for before it opens a request: one for the same tenant, caller, actor,
 * tool (full name, so version too), input schema, input digest (made with the same key) and run.
 */
export interface ConfirmationBindingQuery {
  readonly tenantId: string;
  readonly callerPluginId: string;
  readonly actorUserId: string;
  readonly tool: string;
  readonly schemaHash: string;
  readonly digest: string;
  readonly digestKid: string;
  readonly runId: string | undefined;
  /** Only requests still open at this time: pending and unexpired, or approved with an unexpired token. */
  readonly now: number;
}

/** A state change of a pending request, applied only while it is pending (and, for `live`, unexpired). */
export interface ConfirmationTransition {
  readonly tenantId: string;
  readonly requestId: string;
  readonly to: Exclude<ConfirmationState, "pending">;
  readonly at: number;
  /**
   * `live`: only while `expiresAt > at` (approve, deny, cancel); `expired`: only when `expiresAt <= at`
   * (expiry).
   */
  readonly when: "live" | "expired";
  readonly tokenExpiresAt?: number;
  /** Recorded in the same transaction, only when the transition happens. */
  readonly activity?: ActivityRecord;
}

/** Recovery takes a lease over: a new owner and the next epoch, only if it is still the expired one. */
export interface LeaseTakeover {
  readonly tenantId: string;
  readonly operationId: string;
  /** The epoch it saw; the takeover fails if another instance got there first. */
  readonly leaseEpoch: number;
  readonly owner: string;
  readonly now: number;
  readonly expiresAt: number;
}

/** `settled`, or `lease-lost` when another owner or epoch holds the operation (nothing was written). */
export type OperationSettleResult = "settled" | "lease-lost";

/** A lease this instance holds and wants extended. */
export interface LeaseRenewal {
  readonly tenantId: string;
  readonly operationId: string;
  readonly leaseEpoch: number;
}

/** One page request against the store. */
export interface ActivityListQuery {
  /**
   * Only the events of this caller plugin acting for this actor (a caller reading its own calls for its
   * user, never what the user did through other plugins); all of the tenant's when absent (its admin).
   */
  readonly caller?: { readonly actorUserId: string; readonly callerPluginId: string };
  readonly limit: number;
  /** Events with ids strictly below this one (the previous page's last id). */
  readonly beforeId?: string;
}

/** A presence token's use: its id is recorded so it signs a browser in once. */
export interface PresenceTokenUse {
  readonly tenantId: string;
  /** The token's `jti`. */
  readonly tokenId: string;
  readonly userId: string;
  readonly usedAt: number;
  /** The token's own expiry; the id may be forgotten `CONSUMED_TOKEN_GRACE_MS` after it. */
  readonly expiresAt: number;
}

/** How long a consumed token id outlives its token by default: tokens verify for 5 s of skew past `exp`, and clocks differ. */
export const CONSUMED_TOKEN_GRACE_MS = 10 * 60 * 1000;

/** Cut-offs for `prune`; rows older than these go. */
export interface PruneRequest {
  /** Idempotency records that expired at or before this time. */
  readonly now: number;
  /**
   * Consumed token ids whose token expired at or before this time (default: `now` minus
   * `CONSUMED_TOKEN_GRACE_MS`). Keep it well behind `now`: a token still verifies for a few seconds of
   * clock skew after its expiry, and its id must outlive that.
   */
  readonly consumedTokensExpiredBefore?: number;
  /** Activity events at or before this time. */
  readonly activityBefore: number;
  /** Confirmation requests and runs that expired at or before this time (default: none). */
  readonly confirmationsExpiredBefore?: number;
  /** Outbox rows created at or before this time, delivered or not (default: none). */
  readonly outboxBefore?: number;
  /** Settled operations created at or before this time (default: none); a running one is never deleted. */
  readonly operationsBefore?: number;
}

/** How many rows `prune` deleted. */
export interface PruneResult {
  readonly consumedTokens: number;
  readonly idempotencyRecords: number;
  readonly activityEvents: number;
  readonly confirmations: number;
  readonly runs: number;
  readonly outboxItems: number;
  readonly operations: number;
  /** Completed, failed or cancelled tasks past their time to live (`now`). */
  readonly tasks: number;
}
