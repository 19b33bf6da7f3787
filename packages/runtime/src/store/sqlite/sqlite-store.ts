import type Database from "better-sqlite3";
import {
  buffer,
  confirmationFromRow,
  idempotencyFromRow,
  openConfirmationValues,
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
import type { ActivityChainStore } from "../activity-chain.js";
import { SqliteActivityChain } from "./activity-chain.js";
import { startCheckpointer, type Checkpointer } from "./checkpointer.js";
import { createConfirmation, transitionConfirmation } from "./confirmation-writes.js";
import { pruneSqlite } from "./retention.js";
import { beginOperation, insertActivity, recordSettledOperation, settleOperation } from "./ledger-writes.js";
import { listActivity } from "./activity-reads.js";
import { SqliteGrants } from "./grants.js";
import { SqlitePresenceTokens } from "./presence-tokens.js";
import { SqliteTasks } from "./tasks.js";
import { installPlugin, readTenantConfig, setActivation, setPluginEnabled, setPolicy, setRecoveryPolicy } from "./tenant-config.js";
import { openSqlite } from "./open-database.js";
import { resolveSqliteSettings, type SqliteStoreOptions } from "./settings.js";
import { SqliteChanges } from "./sqlite-changes.js";
import { prepareStatements, type SqliteStatements } from "./statements.js";
import { WriteQueue } from "./write-queue.js";
import { sqliteFileLocation, type StoreLocation } from "../store-location.js";

/**
 * The embedded store: SQLite through better-sqlite3, WAL with `synchronous=NORMAL` (survives a process
 * crash, not a power cut), migrations applied at open, every hot-path statement prepared once.
 */
export async function createSqliteStore(options: SqliteStoreOptions): Promise<Store> {
  const settings = resolveSqliteSettings(options);
  const db = openSqlite(settings);
  const inFile = db.pragma("journal_mode", { simple: true }) === "wal";
  const checkpointer =
    inFile && settings.checkpoint === "background"
      ? startCheckpointer(db, { path: settings.path, intervalMs: settings.checkpointIntervalMs, nativeBinding: settings.nativeBinding })
      : undefined;
  return new SqliteStore(db, new WriteQueue(db, settings.groupCommit), checkpointer, sqliteFileLocation(settings));
}

class SqliteStore implements Store {
  readonly kind = "sqlite";
  readonly location: StoreLocation | undefined;
  readonly #db: Database.Database;
  readonly #s: SqliteStatements;
  readonly #queue: WriteQueue;
  readonly #checkpointer: Checkpointer | undefined;
  readonly #presence: SqlitePresenceTokens;
  readonly #grants: SqliteGrants;
  readonly #tasks: SqliteTasks;
  readonly #announce: SqliteChanges;
  readonly changes: StoreChanges;
  readonly activityChain: ActivityChainStore;

  // Tasks (migration 8): reads and writes through the one queue, like everything else.
  readonly insertTask = (task: TaskRecord) => this.#queue.write(() => this.#tasks.insert(task));
  readonly getTask = (tenantId: string, taskId: string) => this.#queue.read(() => this.#tasks.get(tenantId, taskId));
  readonly replaceTask = (task: TaskRecord, expectedRevision: number) => this.#queue.write(() => this.#tasks.replace(task, expectedRevision));
  readonly listOpenTasks = (now: number, limit: number) => this.#queue.read(() => this.#tasks.open(now, limit));
  readonly findTaskByConfirmation = (tenantId: string, requestId: string) => this.#queue.read(() => this.#tasks.byConfirmation(tenantId, requestId));
  readonly countOpenTasks = (tenantId: string, caller: string, actor: string) => this.#queue.read(() => this.#tasks.countOpen(tenantId, caller, actor));

  constructor(db: Database.Database, queue: WriteQueue, checkpointer: Checkpointer | undefined, location: StoreLocation | undefined) {
    this.#db = db;
    this.location = location;
    this.#s = prepareStatements(db);
    this.#presence = new SqlitePresenceTokens(db);
    this.#grants = new SqliteGrants(db);
    this.#tasks = new SqliteTasks(db);
    this.#queue = queue;
    this.#checkpointer = checkpointer;
    this.#announce = new SqliteChanges(this.#s.dataVersion, () => queue.closed);
    this.changes = this.#announce.changes;
    this.activityChain = new SqliteActivityChain(db, queue);
  }

  /** Announces that `tenantId`'s config moved, once `written` committed and (when `changed` says so) changed something. */
  #tenantChanged<T>(tenantId: string, written: Promise<T>, changed: (result: T) => boolean = () => true): Promise<T> {
    return this.#announce.after(written, (result) => (changed(result) ? { kind: "tenant", tenantId } : undefined));
  }

  loadTenantConfig(tenantId: string, knownVersion?: number): Promise<TenantConfigRecord | undefined> {
    return this.#queue.read(() => readTenantConfig(this.#s, tenantId, knownVersion));
  }

  listTenantIds(limit: number): Promise<readonly string[]> {
    return this.#queue.read(() => this.#s.tenantIds.all(limit) as string[]);
  }

  installPlugin(tenantId: string, pluginId: string, now: number): Promise<void> {
    const installed = this.#queue.write(() => installPlugin(this.#s, tenantId, pluginId, now));
    return this.#tenantChanged(tenantId, installed, Boolean).then(() => undefined);
  }

  setPluginEnabled(tenantId: string, pluginId: string, change: PluginEnabledChange): Promise<boolean> {
    return this.#tenantChanged(
      tenantId,
      this.#queue.write(() => setPluginEnabled(this.#s, tenantId, pluginId, change)),
      Boolean,
    );
  }

  setPolicy(tenantId: string, policyJson: string, activity: ActivityRecord): Promise<void> {
    return this.#tenantChanged(
      tenantId,
      this.#queue.write(() => setPolicy(this.#s, tenantId, policyJson, activity)),
    );
  }

  setActivation(activation: ActivationRecord & { readonly tenantId: string }, activity: ActivityRecord): Promise<void> {
    return this.#tenantChanged(
      activation.tenantId,
      this.#queue.write(() => setActivation(this.#s, activation, activity)),
    );
  }

  setRecoveryPolicy(tenantId: string, policyJson: string, activity: ActivityRecord): Promise<void> {
    return this.#tenantChanged(
      tenantId,
      this.#queue.write(() => setRecoveryPolicy(this.#s, tenantId, policyJson, activity)),
    );
  }

  insertPluginKey(record: PluginKeyRecord): Promise<void> {
    return this.#queue.write(() => {
      this.#s.insertKey.run(record.keyId, record.tenantId, record.pluginId, buffer(record.keyHash), record.createdAt);
    });
  }

  listPluginKeys(tenantId: string, limit: number): Promise<readonly PluginKeyRecord[]> {
    return this.#queue.read(() => (this.#s.tenantKeys.all(tenantId, limit) as Row[]).map(pluginKeyFromRow));
  }

  findPluginKey(keyId: string): Promise<PluginKeyLookup | undefined> {
    return this.#queue.read(() => {
      const row = this.#s.findKey.get(keyId) as Row | undefined;
      return row === undefined ? undefined : pluginKeyLookupFromRow(row);
    });
  }

  revokePluginKey(tenantId: string, keyId: string, now: number): Promise<boolean> {
    const written = this.#queue.write(() => {
      const revoked = this.#s.revokeKey.run(now, keyId, tenantId).changes > 0;
      if (revoked) this.#s.bumpTenant.run(tenantId, now);
      return revoked;
    });
    return this.#tenantChanged(tenantId, written, Boolean);
  }

  beginOperation(begin: OperationBegin): Promise<OperationBeginResult> {
    return this.#queue.write(() => beginOperation(this.#s, this.#grants, begin));
  }

  recordSettledOperation(write: SettledOperationWrite): Promise<SettledOperationResult> {
    return this.#queue.write(() => recordSettledOperation(this.#s, write));
  }

  settleOperation(settle: OperationSettle): Promise<OperationSettleResult> {
    return this.#queue.write(() => settleOperation(this.#s, settle));
  }

  renewLeases(owner: string, leases: readonly LeaseRenewal[], expiresAt: number): Promise<number> {
    if (leases.length === 0) return Promise.resolve(0);
    return this.#queue.write(() => {
      let renewed = 0;
      for (const lease of leases) {
        renewed += this.#s.renewLease.run(expiresAt, lease.operationId, lease.tenantId, owner, lease.leaseEpoch).changes;
      }
      return renewed;
    });
  }

  getOperation(tenantId: string, operationId: string): Promise<OperationRecord | undefined> {
    return this.#queue.read(() => {
      const row = this.#s.getOperation.get(operationId, tenantId) as Row | undefined;
      return row === undefined ? undefined : operationFromRow(row);
    });
  }

  listExpiredLeases(now: number, limit: number): Promise<readonly OperationRecord[]> {
    return this.#queue.read(() => (this.#s.expiredLeases.all(now, Math.max(1, Math.floor(limit))) as Row[]).map(operationFromRow));
  }

  takeLease(takeover: LeaseTakeover): Promise<OperationRecord | undefined> {
    return this.#queue.write(() => {
      const changes = this.#s.takeLease.run(
        takeover.owner,
        takeover.expiresAt,
        takeover.operationId,
        takeover.tenantId,
        takeover.leaseEpoch,
        takeover.now,
      ).changes;
      if (changes === 0) return undefined;
      return operationFromRow(this.#s.getOperation.get(takeover.operationId, takeover.tenantId) as Row);
    });
  }

  insertRun(run: RunRecord): Promise<void> {
    return this.#queue.write(() => {
      this.#s.insertRun.run(run.tenantId, run.runId, run.callerPluginId, run.actorUserId, JSON.stringify(run.allow), run.createdAt, run.expiresAt);
    });
  }

  getRun(tenantId: string, runId: string): Promise<RunRecord | undefined> {
    return this.#queue.read(() => {
      const row = this.#s.getRun.get(tenantId, runId) as Row | undefined;
      return row === undefined ? undefined : runFromRow(row);
    });
  }

  closeRun(tenantId: string, runId: string, closedAt: number): Promise<boolean> {
    return this.#queue.write(() => this.#s.closeRun.run(closedAt, tenantId, runId).changes > 0);
  }

  createConfirmation(record: ConfirmationRecord, maxPending: number): Promise<ConfirmationCreateResult> {
    return this.#queue.write(() => createConfirmation(this.#s, record, maxPending));
  }

  getConfirmation(tenantId: string, requestId: string): Promise<ConfirmationRecord | undefined> {
    return this.#queue.read(() => {
      const row = this.#s.getConfirmation.get(tenantId, requestId) as Row | undefined;
      return row === undefined ? undefined : confirmationFromRow(row);
    });
  }

  listPendingConfirmations(tenantId: string, now: number, limit: number): Promise<readonly ConfirmationRecord[]> {
    return this.#queue.read(() => (this.#s.pendingConfirmations.all(tenantId, now, limit) as Row[]).map(confirmationFromRow));
  }

  findOpenConfirmation(query: ConfirmationBindingQuery): Promise<ConfirmationRecord | undefined> {
    return this.#queue.read(() => {
      // `now` twice: once for an approved request's token, once for a pending request's own expiry.
      const row = this.#s.findOpenConfirmation.get(...openConfirmationValues(query), query.now) as Row | undefined;
      return row === undefined ? undefined : confirmationFromRow(row);
    });
  }

  transitionConfirmation(transition: ConfirmationTransition): Promise<ConfirmationRecord | undefined> {
    const moved = this.#queue.write(() => transitionConfirmation(this.#s, transition));
    return this.#announce.after(moved, (record) =>
      record === undefined ? undefined : { kind: "confirmation", tenantId: record.tenantId, requestId: record.requestId },
    );
  }

  listExpiredConfirmations(now: number, limit: number): Promise<readonly ConfirmationRecord[]> {
    return this.#queue.read(() => (this.#s.expiredConfirmations.all(now, Math.max(1, Math.floor(limit))) as Row[]).map(confirmationFromRow));
  }

  claimOutbox(tenantId: string, claim: OutboxClaimQuery): Promise<readonly OutboxRecord[]> {
    const { limit, now, claimUntil } = claim;
    return this.#queue.write(() => {
      const rows = this.#s.claimableOutbox.all(tenantId, now, Math.max(1, Math.floor(limit))) as Row[];
      return rows.map((row) => {
        this.#s.claimOutboxRow.run(claimUntil, tenantId, row.id);
        return outboxFromRow({ ...row, attempts: Number(row.attempts) + 1, claimed_until: claimUntil });
      });
    });
  }

  ackOutbox(tenantId: string, ids: readonly string[]): Promise<number> {
    return this.#queue.write(() => {
      let deleted = 0;
      for (const id of ids) deleted += this.#s.ackOutbox.run(tenantId, id).changes;
      return deleted;
    });
  }

  findIdempotency(scope: IdempotencyScope, now: number): Promise<IdempotencyRecord | undefined> {
    return this.#queue.read(() => {
      const row = this.#s.findIdempotency.get(...scopeValues(scope), now) as Row | undefined;
      return row === undefined ? undefined : idempotencyFromRow(row);
    });
  }

  findConsumedToken(tenantId: string, tokenId: string): Promise<ConsumedTokenRecord | undefined> {
    return this.#queue.read(() => {
      const row = this.#s.findToken.get(tenantId, tokenId) as Row | undefined;
      return row === undefined ? undefined : tokenFromRow(row);
    });
  }

  appendActivity(event: ActivityRecord): Promise<void> {
    return this.#queue.write(() => insertActivity(this.#s, event));
  }

  listActivity(tenantId: string, query: ActivityListQuery): Promise<readonly ActivityRecord[]> {
    return this.#queue.read(() => listActivity(this.#s, tenantId, query));
  }

  usePresenceToken(use: PresenceTokenUse): Promise<boolean> {
    return this.#queue.write(() => this.#presence.use(use));
  }

  // Grants (migration 9) through the queue.
  readonly insertGrant = (grant: GrantRecord): Promise<void> =>
    this.#announce.after(
      this.#queue.write(() => this.#grants.insert(grant)),
      { kind: "grants", tenantId: grant.tenantId, actorUserId: grant.actorUserId },
    );
  readonly listGrants = (tenantId: string, actorUserId: string, limit: number): Promise<readonly GrantRecord[]> =>
    this.#queue.read(() => this.#grants.list(tenantId, actorUserId, limit));
  readonly revokeGrant = (tenantId: string, actorUserId: string, grantId: string, now: number): Promise<boolean> =>
    this.#announce.after(
      this.#queue.write(() => this.#grants.revoke(tenantId, actorUserId, grantId, now)),
      (revoked) => (revoked ? { kind: "grants", tenantId, actorUserId } : undefined),
    );
  readonly useGrant = (use: GrantUse): Promise<boolean> => this.#queue.write(() => this.#grants.use(use));

  prune(request: PruneRequest): Promise<PruneResult> {
    return this.#queue.write(() => pruneSqlite(this.#db, request));
  }

  ping(): Promise<boolean> {
    if (this.#queue.closed) return Promise.resolve(false);
    try {
      return Promise.resolve(this.#s.ping.get() === 1);
    } catch {
      return Promise.resolve(false);
    }
  }

  async close(): Promise<void> {
    if (this.#queue.closed) return;
    this.#queue.close();
    await this.#checkpointer?.stop();
    try {
      this.#db.pragma("wal_checkpoint(TRUNCATE)");
    } catch {
      // Another connection may hold the database; the WAL is checkpointed by whoever closes last.
    }
    this.#db.close();
  }
}
