/**
 * The one storage contract of the runtime. Every method is async so a networked database can implement
 * it; every row carries a tenant id and no method reads across tenants, except `findPluginKey` (a key
 * id is how a request's tenant is found) and `prune` (retention is a host job).
 * Times are Unix milliseconds; payloads arrive already sealed (the store never sees plaintext).
 */
import type { ActivityChainStore } from "./activity-chain.js";
import type { StoreLocation } from "./store-location.js";
import type { StoreChanges } from "./changes.js";
import type {
  ActivationRecord,
  ActivityListQuery,
  ActivityRecord,
  CONSUMED_TOKEN_GRACE_MS,
  ConfirmationBindingQuery,
  ConfirmationCreateResult,
  ConfirmationRecord,
  ConfirmationTransition,
  ConsumedTokenRecord,
  IdempotencyRecord,
  IdempotencyScope,
  LeaseRenewal,
  LeaseTakeover,
  OperationBegin,
  OperationBeginResult,
  OperationRecord,
  OperationSettle,
  OperationSettleResult,
  OutboxClaimQuery,
  OutboxRecord,
  PluginEnabledChange,
  PluginKeyLookup,
  PluginKeyRecord,
  PresenceTokenUse,
  PruneRequest,
  PruneResult,
  RunRecord,
  SettledOperationResult,
  SettledOperationWrite,
  TenantConfigRecord,
} from "./records.js";
import type { TaskRecord } from "./task-records.js";

import type { GrantRecord, GrantUse } from "./grant-records.js";

export type { StoreChange, StoreChanges } from "./changes.js";
export type { GrantRecord, GrantUse } from "./grant-records.js";
export * from "./records.js";
export type { TaskRecord } from "./task-records.js";
export type * from "./activity-chain.js";
export type { StoreLocation } from "./store-location.js";

/** The storage contract. SQLite and PostgreSQL implement it, and both pass one contract suite (`describeStoreContract`). */
export interface Store {
  /** A short name for logs: "sqlite", "postgres". */
  readonly kind: string;
  /** Where the data lives, for a worker thread's own connection (the audit checkpointer); absent in memory. */
  readonly location?: StoreLocation | undefined;

  /** The tenant's configuration, or undefined when its version is still `knownVersion`. */
  loadTenantConfig(tenantId: string, knownVersion?: number): Promise<TenantConfigRecord | undefined>;
  /** Up to `limit` ids of tenants that have any configuration, in order: what an admin's mistyped tenant id is matched against. */
  listTenantIds(limit: number): Promise<readonly string[]>;
  /** Installs a plugin for a tenant (enabled); installing again changes nothing. */
  installPlugin(tenantId: string, pluginId: string, now: number): Promise<void>;
  /** False when the plugin is not installed for the tenant. */
  setPluginEnabled(tenantId: string, pluginId: string, change: PluginEnabledChange): Promise<boolean>;
  /** Replaces the tenant policy and records `activity` in the same transaction. */
  setPolicy(tenantId: string, policyJson: string, activity: ActivityRecord): Promise<void>;
  /** Replaces one plugin's activation (bumps the config version) and records `activity` with it. */
  setActivation(activation: ActivationRecord & { readonly tenantId: string }, activity: ActivityRecord): Promise<void>;
  /** Replaces the pinned recovery policy (bumps the config version) and records `activity` with it. */
  setRecoveryPolicy(tenantId: string, policyJson: string, activity: ActivityRecord): Promise<void>;

  insertPluginKey(record: PluginKeyRecord): Promise<void>;
  /** The key with this id, in any tenant (authentication finds the tenant this way), with its tenant's config version. */
  findPluginKey(keyId: string): Promise<PluginKeyLookup | undefined>;
  /** Up to `limit` of the tenant's plugin keys, live and revoked, oldest first (the console's key ages). */
  listPluginKeys(tenantId: string, limit: number): Promise<readonly PluginKeyRecord[]>;
  /** False when the tenant has no live key with this id. Revoking moves the tenant's config version. */
  revokePluginKey(tenantId: string, keyId: string, now: number): Promise<boolean>;

  /**
   * The begin transaction; a token id is consumed at most once, an idempotency key taken once.
   * @throws UnansweredCommit when the store cannot tell whether it committed (then read the operation).
   */
  beginOperation(begin: OperationBegin): Promise<OperationBeginResult>;
  /**
   * A read's begin and settle in one transaction (see `SettledOperationWrite`).
   * @throws UnansweredCommit when the store cannot tell whether it committed (then read the operation).
   */
  recordSettledOperation(write: SettledOperationWrite): Promise<SettledOperationResult>;
  /**
   * The settle, in one transaction guarded by lease owner and epoch.
   * @throws when the operation does not exist or is no longer `running` (an invalid transition).
   */
  settleOperation(settle: OperationSettle): Promise<OperationSettleResult>;
  /** Extends the leases this owner still holds; returns how many were extended. */
  renewLeases(owner: string, leases: readonly LeaseRenewal[], expiresAt: number): Promise<number>;
  getOperation(tenantId: string, operationId: string): Promise<OperationRecord | undefined>;
  /** Running operations whose lease expired at or before `now`, in any tenant (recovery is a host job), oldest first. */
  listExpiredLeases(now: number, limit: number): Promise<readonly OperationRecord[]>;
  /**
   * Takes an expired lease: new owner, epoch + 1, new expiry, recovery attempts + 1; only while the
   * operation is running at `leaseEpoch` with a lease expired at `now`. The updated record, or undefined.
   */
  takeLease(takeover: LeaseTakeover): Promise<OperationRecord | undefined>;

  insertRun(run: RunRecord): Promise<void>;
  getRun(tenantId: string, runId: string): Promise<RunRecord | undefined>;
  /** Closes an open run; false when there is none with this id in the tenant or it is already closed. */
  closeRun(tenantId: string, runId: string, closedAt: number): Promise<boolean>;

  /** Creates a pending request unless the (tenant, caller, actor) already has `maxPending` live pending ones. */
  createConfirmation(record: ConfirmationRecord, maxPending: number): Promise<ConfirmationCreateResult>;
  getConfirmation(tenantId: string, requestId: string): Promise<ConfirmationRecord | undefined>;
  /** Up to `limit` of the tenant's requests still pending and unexpired at `now`, soonest to expire first. */
  listPendingConfirmations(tenantId: string, now: number, limit: number): Promise<readonly ConfirmationRecord[]>;
  /**
   * The open request bound to exactly this call (see `ConfirmationBindingQuery`): an approved one whose
   * token is unexpired before a pending unexpired one, the newest of each; undefined when there is none.
   */
  findOpenConfirmation(query: ConfirmationBindingQuery): Promise<ConfirmationRecord | undefined>;
  /** Applies a transition of a pending request; the updated record, or undefined when it did not apply. */
  transitionConfirmation(transition: ConfirmationTransition): Promise<ConfirmationRecord | undefined>;
  /** Pending requests that expired at or before `now`, in any tenant, oldest first. */
  listExpiredConfirmations(now: number, limit: number): Promise<readonly ConfirmationRecord[]>;

  /** Records a new task (its revision is 0). */
  insertTask(task: TaskRecord): Promise<void>;
  getTask(tenantId: string, taskId: string): Promise<TaskRecord | undefined>;
  /**
   * Writes `task` (revision `expectedRevision + 1`) over the row only while that row is still at
   * `expectedRevision`: false when another write came first (read it again and decide again).
   */
  replaceTask(task: TaskRecord, expectedRevision: number): Promise<boolean>;
  /** Tasks not yet completed, failed or cancelled whose driver's claim lapsed at or before `now`, in any tenant, oldest claim first. */
  listOpenTasks(now: number, limit: number): Promise<readonly TaskRecord[]>;
  /** How many tasks of this caller and user are not yet completed, failed or cancelled. */
  countOpenTasks(tenantId: string, callerPluginId: string, actorUserId: string): Promise<number>;
  /** The task that waits for this platform confirmation request, if any. */
  findTaskByConfirmation(tenantId: string, requestId: string): Promise<TaskRecord | undefined>;

  /** Claims up to `limit` unclaimed (or claim-expired at `now`) outbox rows of a tenant, oldest first, until `claimUntil`. */
  claimOutbox(tenantId: string, claim: OutboxClaimQuery): Promise<readonly OutboxRecord[]>;
  /** Deletes delivered outbox rows of a tenant; returns how many. */
  ackOutbox(tenantId: string, ids: readonly string[]): Promise<number>;

  /** The live (unexpired at `now`) record for this scope. */
  findIdempotency(scope: IdempotencyScope, now: number): Promise<IdempotencyRecord | undefined>;
  findConsumedToken(tenantId: string, tokenId: string): Promise<ConsumedTokenRecord | undefined>;

  appendActivity(event: ActivityRecord): Promise<void>;
  /** Newest first. */
  listActivity(tenantId: string, query: ActivityListQuery): Promise<readonly ActivityRecord[]>;
  /**
   * Records a presence token's id as used: true the first time, false when it was used before (on any
   * instance). Ids whose token expired more than `CONSUMED_TOKEN_GRACE_MS` ago are forgotten in passing.
   */
  usePresenceToken(use: PresenceTokenUse): Promise<boolean>;

  /** Records a grant the signed-in user approved on the confirmation page (never a caller's or agent's doing). */
  insertGrant(grant: GrantRecord): Promise<void>;
  /** Up to `limit` of the actor's grants, live and ended, newest first. */
  listGrants(tenantId: string, actorUserId: string, limit: number): Promise<readonly GrantRecord[]>;
  /** Revokes one live grant of the actor at once for every instance; false when there is none. */
  revokeGrant(tenantId: string, actorUserId: string, grantId: string, now: number): Promise<boolean>;
  /**
   * Counts one use of a live grant by one conditional update (`uses < max_calls`, not revoked, unexpired,
   * same binding, version and schema hash): true when it was counted. N calls count at most N uses, on
   * any number of instances.
   */
  useGrant(use: GrantUse): Promise<boolean>;

  /**
   * Deletes expired consumed token ids and idempotency records (with their sealed results), old activity,
   * and, when asked, expired confirmations and runs, old outbox rows and old settled operations.
   */
  prune(request: PruneRequest): Promise<PruneResult>;
  /** The activity hash chain and its signed checkpoints (`toolpact audit`, the runtime's checkpoint job). */
  readonly activityChain: ActivityChainStore;
  /** Changes committed to this database, by this instance and (where the store can tell) by others. */
  readonly changes: StoreChanges;
  /** True when the store answers. */
  ping(): Promise<boolean>;
  /** Finishes pending writes and releases the database. */
  close(): Promise<void>;
}
