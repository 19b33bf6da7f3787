import {
  activityFromRow,
  activityValues,
  buffer,
  idempotencyFromRow,
  operationFromRow,
  outboxFromRow,
  pluginKeyFromRow,
  pluginKeyLookupFromRow,
  runFromRow,
  scopeValues,
  tokenFromRow,
  type Row,
} from "../rows.js";
import type {
  ActivationRecord,
  ActivityListQuery,
  ActivityRecord,
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
  GrantRecord,
  GrantUse,
  PresenceTokenUse,
  PruneRequest,
  PruneResult,
  RunRecord,
  SettledOperationResult,
  SettledOperationWrite,
  Store,
  StoreChanges,
  TaskRecord,
  TenantConfigRecord,
} from "../store.js";
import { createChangeFeed, type ChangeFeed } from "../changes.js";
import type { ActivityChainStore } from "../activity-chain.js";
import { PostgresActivityChain } from "./activity-chain.js";
import type { StoreLocation } from "../store-location.js";
import { PostgresChangeListener } from "./change-listener.js";
import { PostgresConfirmations } from "./confirmations.js";
import { PostgresConnection } from "./connection.js";
import { beginOperation, settleOperation } from "./ledger-writes.js";
import { RecordBatcher } from "./record-batch.js";
import { prunePostgres } from "./retention.js";
import { insertGrant, listGrants, revokeGrant, useGrant } from "./grants.js";
import { usePresenceToken } from "./presence-tokens.js";
import { PostgresTasks } from "./tasks.js";
import { migrateWith } from "./migrate.js";
import { MAX_LIMIT, resolveSettings, type PostgresSettings, type PostgresStoreOptions } from "./settings.js";
import { S } from "./statements.js";
import { loadTenantConfig } from "./tenant-config.js";

export { migratePostgres } from "./migrate.js";

/**
 * The distributed store: PostgreSQL through a `pg` pool shared by this instance. Several instances may
 * share one database: single use of token ids, idempotency keys and lease-guarded settles rest on unique
 * keys and row locks taken inside one statement (each its own transaction), never on this process's memory.
 * Migrations are applied at open, under an advisory lock. An unreachable database rejects with
 * STORE_UNAVAILABLE within the connection or statement timeout; the pool reconnects when it is back.
 */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const settings = resolveSettings(options);
  await migrateWith(settings);
  const connection = new PostgresConnection(settings);
  await connection.checkSessions();
  const store = new PostgresStore(connection, settings);
  await store.listen();
  return store;
}

class PostgresStore implements Store {
  readonly kind = "postgres";
  readonly location: StoreLocation;
  readonly #db: PostgresConnection;
  readonly #feed: ChangeFeed;
  readonly #listener: PostgresChangeListener;
  readonly #records: RecordBatcher;
  readonly #tasks: PostgresTasks;
  readonly #confirmations: PostgresConfirmations;
  readonly changes: StoreChanges;
  readonly activityChain: ActivityChainStore;

  constructor(db: PostgresConnection, settings: PostgresSettings) {
    this.#db = db;
    const { url, schema, connectionTimeoutMs, statementTimeoutMs } = settings;
    this.location = { kind: "postgres", url, connectionTimeoutMs, statementTimeoutMs, ...(schema === undefined ? {} : { schema }) };
    this.#records = new RecordBatcher(db);
    this.#tasks = new PostgresTasks(db);
    this.#confirmations = new PostgresConfirmations(db, (change) => this.#feed.emit(change));
    this.#listener = new PostgresChangeListener({ settings, emit: (change) => this.#feed.emit(change) });
    this.#feed = createChangeFeed({ epoch: () => this.#listener.epoch(), hearsOthers: () => this.#listener.listening });
    this.changes = this.#feed.changes;
    this.activityChain = new PostgresActivityChain(db);
  }

  /** Starts hearing other instances' changes (the first connection is awaited; later ones reconnect on their own). */
  listen(): Promise<void> {
    return this.#listener.start();
  }

  /** This instance's own change, announced as soon as it committed (other instances hear it through NOTIFY). */
  #tenantChanged(tenantId: string): void {
    this.#feed.emit({ kind: "tenant", tenantId });
  }

  loadTenantConfig(tenantId: string, knownVersion?: number): Promise<TenantConfigRecord | undefined> {
    return loadTenantConfig(this.#db, tenantId, knownVersion);
  }

  async listTenantIds(limit: number): Promise<readonly string[]> {
    return (await this.#db.rows("could not list tenants", S.tenantIds, [limit])).map((row) => String(row.tenant_id));
  }

  async installPlugin(tenantId: string, pluginId: string, now: number): Promise<void> {
    const result = await this.#db.query("could not install a plugin", S.installPlugin, [tenantId, pluginId, now]);
    if ((result.rowCount ?? 0) > 0) this.#tenantChanged(tenantId);
  }

  async setPluginEnabled(tenantId: string, pluginId: string, change: PluginEnabledChange): Promise<boolean> {
    const { enabled, now } = change;
    const [row] = await this.#db.rows("could not enable or disable a plugin", S.setPluginEnabled, [tenantId, pluginId, enabled, now]);
    const changed = Number(row?.changed ?? 0) > 0;
    if (changed) this.#tenantChanged(tenantId);
    return changed;
  }

  async setPolicy(tenantId: string, policyJson: string, activity: ActivityRecord): Promise<void> {
    await this.#db.query("could not set a tenant's policy", S.setPolicy, [tenantId, policyJson, activity.at, ...activityValues(activity)]);
    this.#tenantChanged(tenantId);
  }

  async setActivation(activation: ActivationRecord & { readonly tenantId: string }, activity: ActivityRecord): Promise<void> {
    await this.#db.query("could not set a plugin's activation", S.setActivation, [
      activation.tenantId,
      activity.at,
      activation.pluginId,
      activation.gates,
      activation.hooks,
      activation.guards,
      ...activityValues(activity),
    ]);
    this.#tenantChanged(activation.tenantId);
  }

  async setRecoveryPolicy(tenantId: string, policyJson: string, activity: ActivityRecord): Promise<void> {
    await this.#db.query("could not set a tenant's recovery policy", S.setRecoveryPolicy, [tenantId, policyJson, activity.at, ...activityValues(activity)]);
    this.#tenantChanged(tenantId);
  }

  async insertPluginKey(record: PluginKeyRecord): Promise<void> {
    await this.#db.query("could not store a plugin key", S.insertKey, [
      record.keyId,
      record.tenantId,
      record.pluginId,
      buffer(record.keyHash),
      record.createdAt,
    ]);
  }

  async listPluginKeys(tenantId: string, limit: number): Promise<readonly PluginKeyRecord[]> {
    return (await this.#db.rows("could not list plugin keys", S.listPluginKeys, [tenantId, limit])).map(pluginKeyFromRow);
  }

  async findPluginKey(keyId: string): Promise<PluginKeyLookup | undefined> {
    const [row] = await this.#db.rows("could not look up a plugin key", S.findKey, [keyId]);
    return row === undefined ? undefined : pluginKeyLookupFromRow(row);
  }

  async revokePluginKey(tenantId: string, keyId: string, now: number): Promise<boolean> {
    const [row] = await this.#db.rows("could not revoke a plugin key", S.revokeKey, [now, keyId, tenantId]);
    const revoked = Number(row?.revoked ?? 0) > 0;
    if (revoked) this.#tenantChanged(tenantId);
    return revoked;
  }

  beginOperation(begin: OperationBegin): Promise<OperationBeginResult> {
    return beginOperation(this.#db, begin);
  }

  recordSettledOperation(write: SettledOperationWrite): Promise<SettledOperationResult> {
    return this.#records.record(write);
  }

  settleOperation(settle: OperationSettle): Promise<OperationSettleResult> {
    return settleOperation(this.#db, settle);
  }

  async renewLeases(owner: string, leases: readonly LeaseRenewal[], expiresAt: number): Promise<number> {
    if (leases.length === 0) return 0;
    const result = await this.#db.query("could not renew leases", S.renewLeases, [
      expiresAt,
      leases.map((lease) => lease.operationId),
      leases.map((lease) => lease.tenantId),
      leases.map((lease) => lease.leaseEpoch),
      owner,
    ]);
    return result.rowCount ?? 0;
  }

  async getOperation(tenantId: string, operationId: string): Promise<OperationRecord | undefined> {
    const [row] = await this.#db.rows("could not read an operation", S.getOperation, [operationId, tenantId]);
    return row === undefined ? undefined : operationFromRow(row);
  }

  async listExpiredLeases(now: number, limit: number): Promise<readonly OperationRecord[]> {
    const rows = await this.#db.rows("could not list expired leases", S.expiredLeases, [now, clampLimit(limit)]);
    return rows.map(operationFromRow);
  }

  async takeLease(takeover: LeaseTakeover): Promise<OperationRecord | undefined> {
    const [row] = await this.#db.rows("could not take over a lease", S.takeLease, [
      takeover.owner,
      takeover.expiresAt,
      takeover.operationId,
      takeover.tenantId,
      takeover.leaseEpoch,
      takeover.now,
    ]);
    return row === undefined ? undefined : operationFromRow(row);
  }

  async insertRun(run: RunRecord): Promise<void> {
    await this.#db.query("could not open a run", S.insertRun, [
      run.tenantId,
      run.runId,
      run.callerPluginId,
      run.actorUserId,
      run.allow,
      run.createdAt,
      run.expiresAt,
    ]);
  }

  async getRun(tenantId: string, runId: string): Promise<RunRecord | undefined> {
    const [row] = await this.#db.rows("could not read a run", S.getRun, [tenantId, runId]);
    return row === undefined ? undefined : runFromRow(row);
  }

  async closeRun(tenantId: string, runId: string, closedAt: number): Promise<boolean> {
    return ((await this.#db.query("could not close a run", S.closeRun, [closedAt, tenantId, runId])).rowCount ?? 0) > 0;
  }

  insertTask(task: TaskRecord): Promise<void> {
    return this.#tasks.insert(task);
  }

  getTask(tenantId: string, taskId: string): Promise<TaskRecord | undefined> {
    return this.#tasks.get(tenantId, taskId);
  }

  replaceTask(task: TaskRecord, expectedRevision: number): Promise<boolean> {
    return this.#tasks.replace(task, expectedRevision);
  }

  listOpenTasks(now: number, limit: number): Promise<readonly TaskRecord[]> {
    return this.#tasks.open(now, Math.min(limit, MAX_LIMIT));
  }

  findTaskByConfirmation(tenantId: string, requestId: string): Promise<TaskRecord | undefined> {
    return this.#tasks.byConfirmation(tenantId, requestId);
  }

  countOpenTasks(tenantId: string, callerPluginId: string, actorUserId: string): Promise<number> {
    return this.#tasks.countOpen(tenantId, callerPluginId, actorUserId);
  }

  createConfirmation(record: ConfirmationRecord, maxPending: number): Promise<ConfirmationCreateResult> {
    return this.#confirmations.create(record, maxPending);
  }

  getConfirmation(tenantId: string, requestId: string): Promise<ConfirmationRecord | undefined> {
    return this.#confirmations.get(tenantId, requestId);
  }

  listPendingConfirmations(tenantId: string, now: number, limit: number): Promise<readonly ConfirmationRecord[]> {
    return this.#confirmations.pending(tenantId, now, limit);
  }

  findOpenConfirmation(query: ConfirmationBindingQuery): Promise<ConfirmationRecord | undefined> {
    return this.#confirmations.findOpen(query);
  }

  transitionConfirmation(transition: ConfirmationTransition): Promise<ConfirmationRecord | undefined> {
    return this.#confirmations.transition(transition);
  }

  listExpiredConfirmations(now: number, limit: number): Promise<readonly ConfirmationRecord[]> {
    return this.#confirmations.expired(now, clampLimit(limit));
  }

  async claimOutbox(tenantId: string, claim: OutboxClaimQuery): Promise<readonly OutboxRecord[]> {
    const { limit, now, claimUntil } = claim;
    const rows = await this.#db.rows("could not claim outbox rows", S.claimOutbox, [tenantId, now, clampLimit(limit), claimUntil]);
    return rows.map(outboxFromRow).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async ackOutbox(tenantId: string, ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    return (await this.#db.query("could not acknowledge outbox rows", S.ackOutbox, [tenantId, ids])).rowCount ?? 0;
  }

  async findIdempotency(scope: IdempotencyScope, now: number): Promise<IdempotencyRecord | undefined> {
    const [row] = await this.#db.rows("could not read an idempotency record", S.findIdempotency, [...scopeValues(scope), now]);
    return row === undefined ? undefined : idempotencyFromRow(row);
  }

  async findConsumedToken(tenantId: string, tokenId: string): Promise<ConsumedTokenRecord | undefined> {
    const [row] = await this.#db.rows("could not read a consumed token id", S.findToken, [tenantId, tokenId]);
    return row === undefined ? undefined : tokenFromRow(row);
  }

  async appendActivity(event: ActivityRecord): Promise<void> {
    await this.#db.query("could not record an activity event", S.insertActivity, activityValues(event));
  }

  async listActivity(tenantId: string, query: ActivityListQuery): Promise<readonly ActivityRecord[]> {
    const limit = clampLimit(query.limit);
    const what = "could not list activity";
    let rows: Row[];
    const caller = query.caller;
    if (caller !== undefined) {
      rows =
        query.beforeId === undefined
          ? await this.#db.rows(what, S.listCallerActivity, [tenantId, caller.actorUserId, caller.callerPluginId, limit])
          : await this.#db.rows(what, S.listCallerActivityBefore, [tenantId, caller.actorUserId, caller.callerPluginId, query.beforeId, limit]);
    } else {
      rows =
        query.beforeId === undefined
          ? await this.#db.rows(what, S.listActivity, [tenantId, limit])
          : await this.#db.rows(what, S.listActivityBefore, [tenantId, query.beforeId, limit]);
    }
    return rows.map(activityFromRow);
  }

  usePresenceToken(use: PresenceTokenUse): Promise<boolean> {
    return usePresenceToken(this.#db, use);
  }

  async insertGrant(grant: GrantRecord): Promise<void> {
    await insertGrant(this.#db, grant);
    this.#feed.emit({ kind: "grants", tenantId: grant.tenantId, actorUserId: grant.actorUserId });
  }

  listGrants(tenantId: string, actorUserId: string, limit: number): Promise<readonly GrantRecord[]> {
    return listGrants(this.#db, tenantId, actorUserId, Math.min(limit, MAX_LIMIT));
  }

  async revokeGrant(tenantId: string, actorUserId: string, grantId: string, now: number): Promise<boolean> {
    const revoked = await revokeGrant(this.#db, tenantId, actorUserId, grantId, now);
    if (revoked) this.#feed.emit({ kind: "grants", tenantId, actorUserId });
    return revoked;
  }

  useGrant(use: GrantUse): Promise<boolean> {
    return useGrant(this.#db, use);
  }

  prune(request: PruneRequest): Promise<PruneResult> {
    return prunePostgres(this.#db, request);
  }

  async ping(): Promise<boolean> {
    if (this.#db.closed) return false;
    try {
      return (await this.#db.answers(S.ping))?.ok === 1;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.#listener.close();
    await this.#db.close();
  }
}

/** A LIMIT PostgreSQL takes: at least 1, at most a 32-bit integer. */
function clampLimit(limit: number): number {
  return Math.min(MAX_LIMIT, Math.max(1, Math.floor(limit)));
}
