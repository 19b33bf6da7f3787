import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import { ToolpactError } from "@toolpact/contract";
import { uuidv7Floor } from "../ids.js";
import { checkSettleState, storeClosed, unsettled } from "./refusals.js";
import {
  ACTIVITY_COLUMNS,
  activityFromRow,
  activityValues,
  buffer,
  confirmationFromRow,
  confirmationValues,
  idempotencyFromRow,
  list,
  operationFromRow,
  outboxFromRow,
  pluginKeyFromRow,
  runFromRow,
  scopeValues,
  settleValues,
  tenantConfigFromRow,
  tokenFromRow,
  type Row,
} from "./rows.js";
import { pendingMigrations } from "./schema-migration.js";
import { SQLITE_MIGRATIONS, type SqliteMigration } from "./sqlite-migrations.js";
import {
  CONSUMED_TOKEN_GRACE_MS,
  type ActivationRecord,
  type ActivityListQuery,
  type ActivityRecord,
  type ConfirmationCreateResult,
  type ConfirmationRecord,
  type ConfirmationTransition,
  type ConsumedTokenRecord,
  type LeaseTakeover,
  type OutboxRecord,
  type RunRecord,
  type IdempotencyRecord,
  type IdempotencyScope,
  type LeaseRenewal,
  type OperationBegin,
  type OperationBeginResult,
  type OperationRecord,
  type OperationSettle,
  type OperationSettleResult,
  type PluginKeyRecord,
  type PruneRequest,
  type PruneResult,
  type Store,
  type TenantConfigRecord,
} from "./store.js";

/** Options of `createSqliteStore`. */
export interface SqliteStoreOptions {
  /** A file path (its folder is created) or `":memory:"`. */
  readonly path: string;
  /** How long a write waits for another process's lock, in ms (default 5000). */
  readonly busyTimeoutMs?: number;
  /**
   * Group commit: writes requested in the same event-loop turn share one transaction. Each write stays
   * all-or-nothing: when one fails, the batch is redone with each write in its own savepoint, so one
   * failing write does not undo another. Default true; false commits each write alone.
   */
  readonly groupCommit?: boolean;
  /**
   * Where WAL checkpoints run: "background" (default) copies the WAL into the database from a worker
   * thread with its own connection, so the event loop never waits for it; "inline" leaves SQLite's
   * automatic checkpoint on the writing connection.
   */
  readonly checkpoint?: "background" | "inline";
  /** How often the background checkpoint runs, in ms (default 250). */
  readonly checkpointIntervalMs?: number;
}

/**
 * The embedded store: SQLite through better-sqlite3, WAL with `synchronous=NORMAL` (survives a process
 * crash, not a power cut), migrations applied at open, every hot-path statement prepared once.
 */
export async function createSqliteStore(options: SqliteStoreOptions): Promise<Store> {
  if (options.path !== ":memory:" && !options.path.startsWith("file:")) {
    mkdirSync(dirname(options.path), { recursive: true });
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(options.path, { timeout: options.busyTimeoutMs ?? 5000 });
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = OFF");
    migrate(db, SQLITE_MIGRATIONS);
  } catch (error) {
    db?.close();
    throw storeUnavailable(`could not open the SQLite database at ${options.path}`, error);
  }
  const inFile = db.pragma("journal_mode", { simple: true }) === "wal";
  const checkpointer =
    inFile && (options.checkpoint ?? "background") === "background"
      ? startCheckpointer(db, options.path, options.checkpointIntervalMs ?? 250)
      : undefined;
  return new SqliteStore(db, options.groupCommit ?? true, checkpointer);
}

/** The background checkpoint: a worker thread with its own connection runs PASSIVE checkpoints. */
interface Checkpointer {
  stop(): Promise<void>;
}

/** The worker's body (CommonJS, evaluated in the worker): a loop of PASSIVE checkpoints. */
const CHECKPOINT_WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 5000 });
const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
const timer = setInterval(() => {
  try { checkpoint.get(); } catch { parentPort.postMessage("failed"); }
}, workerData.intervalMs);
parentPort.on("message", () => { clearInterval(timer); db.close(); parentPort.close(); });
`;

function startCheckpointer(db: Database.Database, path: string, intervalMs: number): Checkpointer | undefined {
  let worker: Worker;
  try {
    worker = new Worker(CHECKPOINT_WORKER, {
      eval: true,
      // The body is CommonJS: the parent's flags (e.g. --input-type=module) must not change how it is read.
      execArgv: [],
      workerData: { path, driver: createRequire(import.meta.url).resolve("better-sqlite3"), intervalMs },
    });
  } catch {
    return undefined;
  }
  // The writing connection leaves checkpoints to the worker; if the worker fails or goes away, it takes them back.
  db.pragma("wal_autocheckpoint = 0");
  let stopping = false;
  let exited = false;
  const takeBack = () => {
    if (!stopping && db.open) db.pragma("wal_autocheckpoint = 1000");
  };
  worker.on("message", takeBack);
  worker.on("error", takeBack);
  worker.on("exit", () => {
    exited = true;
    takeBack();
  });
  worker.unref();
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        stopping = true;
        // A worker that already exited (or never started) has nothing to close.
        if (exited || worker.threadId < 0) return resolve();
        // Keep the process alive until the worker has closed its connection; if it does not answer, end it.
        worker.ref();
        const fallback = setTimeout(() => void worker.terminate().then(() => resolve(), () => resolve()), 2000);
        worker.once("exit", () => {
          clearTimeout(fallback);
          resolve();
        });
        worker.postMessage("stop");
      }),
  };
}

/** Applies pending migrations in one `BEGIN IMMEDIATE` transaction, so hosts starting together apply each once. */
export function migrate(db: Database.Database, migrations: readonly SqliteMigration[]): number {
  db.exec(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
  );
  const apply = db.transaction(() => {
    const row = db.prepare("SELECT MAX(version) AS version FROM schema_migrations").get() as { version: number | null };
    const pending = pendingMigrations(migrations, row.version ?? 0);
    const record = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
    for (const step of pending) {
      db.exec(step.sql);
      record.run(step.version, step.name, Date.now());
    }
    return pending.length;
  });
  return apply.immediate();
}

function storeUnavailable(what: string, cause: unknown): ToolpactError {
  const code = (cause as { code?: unknown } | undefined)?.code;
  const detail = typeof code === "string" ? ` (${code})` : "";
  return new ToolpactError("STORE_UNAVAILABLE", `${what}${detail}: check the database file, its disk and its permissions`, {}, {
    cause,
  });
}

interface Job {
  readonly work: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

class SqliteStore implements Store {
  readonly kind = "sqlite";
  readonly #db: Database.Database;
  readonly #groupCommit: boolean;
  #pending: Job[] = [];
  #scheduled = false;
  #closed = false;

  readonly #tenantVersion: Database.Statement;
  readonly #tenantRow: Database.Statement;
  readonly #tenantInstalls: Database.Statement;
  readonly #bumpTenant: Database.Statement;
  readonly #setTenantPolicy: Database.Statement;
  readonly #insertInstall: Database.Statement;
  readonly #setEnabled: Database.Statement;
  readonly #insertKey: Database.Statement;
  readonly #findKey: Database.Statement;
  readonly #revokeKey: Database.Statement;
  readonly #insertOperation: Database.Statement;
  readonly #settleOperation: Database.Statement;
  readonly #operationLease: Database.Statement;
  readonly #renewLease: Database.Statement;
  readonly #getOperation: Database.Statement;
  readonly #findIdempotency: Database.Statement;
  readonly #findIdempotencyAny: Database.Statement;
  readonly #deleteIdempotency: Database.Statement;
  readonly #insertIdempotency: Database.Statement;
  readonly #settleIdempotency: Database.Statement;
  readonly #findToken: Database.Statement;
  readonly #insertToken: Database.Statement;
  readonly #insertActivity: Database.Statement;
  readonly #listActivity: Database.Statement;
  readonly #listActivityBefore: Database.Statement;
  readonly #listActorActivity: Database.Statement;
  readonly #listActorActivityBefore: Database.Statement;
  readonly #ping: Database.Statement;
  readonly #tenantActivations: Database.Statement;
  readonly #upsertActivation: Database.Statement;
  readonly #setTenantRecovery: Database.Statement;
  readonly #expiredLeases: Database.Statement;
  readonly #takeLease: Database.Statement;
  readonly #settleIdempotencyByOperation: Database.Statement;
  readonly #insertRun: Database.Statement;
  readonly #getRun: Database.Statement;
  readonly #closeRun: Database.Statement;
  readonly #countPending: Database.Statement;
  readonly #oldestPending: Database.Statement;
  readonly #insertConfirmation: Database.Statement;
  readonly #getConfirmation: Database.Statement;
  readonly #transitionLive: Database.Statement;
  readonly #transitionExpired: Database.Statement;
  readonly #expiredConfirmations: Database.Statement;
  readonly #insertOutbox: Database.Statement;
  readonly #claimableOutbox: Database.Statement;
  readonly #claimOutboxRow: Database.Statement;
  readonly #ackOutbox: Database.Statement;
  readonly #batch: Database.Transaction<(jobs: readonly Job[], outcomes: unknown[]) => void>;
  readonly #isolatedBatch: Database.Transaction<(jobs: readonly Job[], outcomes: { ok: boolean; value: unknown }[]) => void>;
  readonly #single: (work: () => unknown) => unknown;
  readonly #checkpointer: Checkpointer | undefined;

  constructor(db: Database.Database, groupCommit: boolean, checkpointer: Checkpointer | undefined) {
    this.#db = db;
    this.#groupCommit = groupCommit;
    this.#checkpointer = checkpointer;
    this.#tenantVersion = db.prepare("SELECT config_version FROM tenants WHERE tenant_id = ?").pluck();
    this.#tenantRow = db.prepare("SELECT config_version, policy, recovery_policy FROM tenants WHERE tenant_id = ?");
    this.#tenantInstalls = db.prepare(
      "SELECT plugin_id, enabled, installed_at FROM plugin_installs WHERE tenant_id = ? ORDER BY plugin_id",
    );
    this.#bumpTenant = db.prepare(
      `INSERT INTO tenants (tenant_id, config_version, policy, updated_at) VALUES (?, 1, NULL, ?)
       ON CONFLICT (tenant_id) DO UPDATE SET config_version = config_version + 1, updated_at = excluded.updated_at`,
    );
    this.#setTenantPolicy = db.prepare("UPDATE tenants SET policy = ? WHERE tenant_id = ?");
    this.#insertInstall = db.prepare(
      `INSERT INTO plugin_installs (tenant_id, plugin_id, enabled, installed_at, updated_at) VALUES (?, ?, 1, ?, ?)
       ON CONFLICT (tenant_id, plugin_id) DO NOTHING`,
    );
    this.#setEnabled = db.prepare(
      "UPDATE plugin_installs SET enabled = ?, updated_at = ? WHERE tenant_id = ? AND plugin_id = ?",
    );
    this.#insertKey = db.prepare(
      "INSERT INTO plugin_keys (key_id, tenant_id, plugin_id, key_hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)",
    );
    this.#findKey = db.prepare(
      "SELECT key_id, tenant_id, plugin_id, key_hash, created_at, revoked_at FROM plugin_keys WHERE key_id = ?",
    );
    this.#revokeKey = db.prepare(
      "UPDATE plugin_keys SET revoked_at = ? WHERE key_id = ? AND tenant_id = ? AND revoked_at IS NULL",
    );
    this.#insertOperation = db.prepare(
      `INSERT INTO operations (operation_id, tenant_id, caller_plugin_id, actor_user_id, provider_plugin_id, tool, state,
         error_code, created_at, settled_at, lease_owner, lease_epoch, lease_expires_at, sealed_input)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#settleOperation = db.prepare(
      `UPDATE operations SET state = ?, error_code = ?, settled_at = ?, sealed_input = NULL
       WHERE operation_id = ? AND tenant_id = ? AND state = 'running' AND lease_owner = ? AND lease_epoch = ?`,
    );
    this.#operationLease = db.prepare("SELECT state FROM operations WHERE operation_id = ? AND tenant_id = ?").pluck();
    this.#renewLease = db.prepare(
      `UPDATE operations SET lease_expires_at = ?
       WHERE operation_id = ? AND tenant_id = ? AND state = 'running' AND lease_owner = ? AND lease_epoch = ?`,
    );
    this.#getOperation = db.prepare("SELECT * FROM operations WHERE operation_id = ? AND tenant_id = ?");
    const idempotencyKey =
      "tenant_id = ? AND caller_plugin_id = ? AND actor_user_id = ? AND tool = ? AND key_hash = ?";
    this.#findIdempotency = db.prepare(`SELECT * FROM idempotency_keys WHERE ${idempotencyKey} AND expires_at > ?`);
    this.#findIdempotencyAny = db.prepare(`SELECT * FROM idempotency_keys WHERE ${idempotencyKey}`);
    this.#deleteIdempotency = db.prepare(`DELETE FROM idempotency_keys WHERE ${idempotencyKey}`);
    this.#insertIdempotency = db.prepare(
      `INSERT INTO idempotency_keys (tenant_id, caller_plugin_id, actor_user_id, tool, key_hash, input_digest, operation_id,
         state, error_code, sealed_result, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'running', NULL, NULL, ?, ?)`,
    );
    this.#settleIdempotency = db.prepare(
      `UPDATE idempotency_keys SET state = ?, error_code = ?, sealed_result = ?, guard_set = ?
       WHERE ${idempotencyKey} AND operation_id = ?`,
    );
    this.#findToken = db.prepare("SELECT * FROM consumed_tokens WHERE tenant_id = ? AND token_id = ?");
    this.#insertToken = db.prepare(
      `INSERT INTO consumed_tokens (tenant_id, token_id, operation_id, caller_plugin_id, actor_user_id, consumed_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#insertActivity = db.prepare(
      `INSERT INTO activity (${ACTIVITY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#listActivity = db.prepare("SELECT * FROM activity WHERE tenant_id = ? ORDER BY id DESC LIMIT ?");
    this.#listActivityBefore = db.prepare(
      "SELECT * FROM activity WHERE tenant_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
    );
    this.#listActorActivity = db.prepare(
      "SELECT * FROM activity WHERE tenant_id = ? AND actor_user_id = ? ORDER BY id DESC LIMIT ?",
    );
    this.#listActorActivityBefore = db.prepare(
      "SELECT * FROM activity WHERE tenant_id = ? AND actor_user_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
    );
    this.#ping = db.prepare("SELECT 1").pluck();
    this.#tenantActivations = db.prepare(
      "SELECT plugin_id, gates, hooks, guards FROM plugin_activations WHERE tenant_id = ? ORDER BY plugin_id",
    );
    this.#upsertActivation = db.prepare(
      `INSERT INTO plugin_activations (tenant_id, plugin_id, gates, hooks, guards, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, plugin_id) DO UPDATE SET gates = excluded.gates, hooks = excluded.hooks,
         guards = excluded.guards, updated_at = excluded.updated_at`,
    );
    this.#setTenantRecovery = db.prepare("UPDATE tenants SET recovery_policy = ? WHERE tenant_id = ?");
    this.#expiredLeases = db.prepare(
      "SELECT * FROM operations WHERE state = 'running' AND lease_expires_at <= ? ORDER BY lease_expires_at LIMIT ?",
    );
    this.#takeLease = db.prepare(
      `UPDATE operations SET lease_owner = ?, lease_epoch = lease_epoch + 1, lease_expires_at = ?,
         recovery_attempts = recovery_attempts + 1
       WHERE operation_id = ? AND tenant_id = ? AND state = 'running' AND lease_epoch = ? AND lease_expires_at <= ?`,
    );
    this.#settleIdempotencyByOperation = db.prepare(
      "UPDATE idempotency_keys SET state = ?, error_code = ?, sealed_result = ?, guard_set = ? WHERE tenant_id = ? AND operation_id = ?",
    );
    this.#insertRun = db.prepare(
      `INSERT INTO runs (tenant_id, run_id, caller_plugin_id, actor_user_id, allow, created_at, expires_at, closed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`,
    );
    this.#getRun = db.prepare("SELECT * FROM runs WHERE tenant_id = ? AND run_id = ?");
    this.#closeRun = db.prepare("UPDATE runs SET closed_at = ? WHERE tenant_id = ? AND run_id = ? AND closed_at IS NULL");
    const pendingOf = "tenant_id = ? AND caller_plugin_id = ? AND actor_user_id = ? AND status = 'pending' AND expires_at > ?";
    this.#countPending = db.prepare(`SELECT COUNT(*) FROM confirmation_requests WHERE ${pendingOf}`).pluck();
    this.#oldestPending = db.prepare(`SELECT MIN(expires_at) FROM confirmation_requests WHERE ${pendingOf}`).pluck();
    this.#insertConfirmation = db.prepare(
      `INSERT INTO confirmation_requests (tenant_id, request_id, tool, provider_plugin_id, caller_plugin_id, actor_user_id,
         digest, digest_kid, schema_hash, effect, mode, run_id, status, created_at, expires_at, decided_at, sealed_preview,
         token_expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, NULL, ?, NULL)`,
    );
    this.#getConfirmation = db.prepare("SELECT * FROM confirmation_requests WHERE tenant_id = ? AND request_id = ?");
    const transition = `UPDATE confirmation_requests SET status = ?, decided_at = ?, token_expires_at = ?, sealed_preview = NULL
       WHERE tenant_id = ? AND request_id = ? AND status = 'pending'`;
    this.#transitionLive = db.prepare(`${transition} AND expires_at > ?`);
    this.#transitionExpired = db.prepare(`${transition} AND expires_at <= ?`);
    this.#expiredConfirmations = db.prepare(
      "SELECT * FROM confirmation_requests WHERE status = 'pending' AND expires_at <= ? ORDER BY expires_at LIMIT ?",
    );
    this.#insertOutbox = db.prepare(
      `INSERT INTO outbox (tenant_id, id, operation_id, tool, hook, kind, sealed_payload, created_at, attempts, claimed_until)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, NULL)`,
    );
    this.#claimableOutbox = db.prepare(
      "SELECT * FROM outbox WHERE tenant_id = ? AND (claimed_until IS NULL OR claimed_until <= ?) ORDER BY id LIMIT ?",
    );
    this.#claimOutboxRow = db.prepare(
      "UPDATE outbox SET attempts = attempts + 1, claimed_until = ? WHERE tenant_id = ? AND id = ?",
    );
    this.#ackOutbox = db.prepare("DELETE FROM outbox WHERE tenant_id = ? AND id = ?");

    const savepoint = db.transaction((work: () => unknown) => work());
    this.#single = (work) => savepoint.immediate(work);
    // The common case: every job succeeds, and the batch is one plain transaction.
    this.#batch = db.transaction((jobs: readonly Job[], outcomes: unknown[]) => {
      for (const job of jobs) outcomes.push(job.work());
    });
    // After a failure: the same jobs again, each in its own savepoint.
    this.#isolatedBatch = db.transaction((jobs: readonly Job[], outcomes: { ok: boolean; value: unknown }[]) => {
      for (const job of jobs) {
        try {
          outcomes.push({ ok: true, value: savepoint(job.work) });
        } catch (error) {
          // A failure that ended the whole transaction (disk full, I/O) fails the batch; others stay with their job.
          if (!db.inTransaction) throw error;
          outcomes.push({ ok: false, value: error });
        }
      }
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Writes go through one queue: with group commit, everything asked for in one event-loop turn
  // becomes one transaction. Jobs are closures that read and write only through this connection, so
  // a batch that fails can be rolled back and run again, job by job.

  #write<T>(work: () => T): Promise<T> {
    if (this.#closed) return Promise.reject(storeClosed());
    if (!this.#groupCommit) {
      try {
        return Promise.resolve(this.#single(work) as T);
      } catch (error) {
        return Promise.reject(asStoreError(error));
      }
    }
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(this.#flush);
      }
    });
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    const jobs = this.#pending;
    if (jobs.length === 0) return;
    this.#pending = [];
    const values: unknown[] = [];
    let firstError: unknown;
    try {
      this.#batch.immediate(jobs, values);
      for (let index = 0; index < jobs.length; index++) jobs[index]!.resolve(values[index]);
      return;
    } catch (error) {
      firstError = error;
    }
    // Something failed and the whole batch rolled back: with one job, that job failed; else redo each alone.
    if (jobs.length === 1) {
      jobs[0]!.reject(asStoreError(firstError));
      return;
    }
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      this.#isolatedBatch.immediate(jobs, outcomes);
    } catch (error) {
      const failure = asStoreError(error);
      for (const job of jobs) job.reject(failure);
      return;
    }
    for (let index = 0; index < jobs.length; index++) {
      const outcome = outcomes[index]!;
      if (outcome.ok) jobs[index]!.resolve(outcome.value);
      else jobs[index]!.reject(asStoreError(outcome.value));
    }
  };

  #read<T>(work: () => T): Promise<T> {
    if (this.#closed) return Promise.reject(storeClosed());
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(asStoreError(error));
    }
  }

  // ---------------------------------------------------------------------------------------------

  loadTenantConfig(tenantId: string, knownVersion?: number): Promise<TenantConfigRecord | undefined> {
    return this.#read(() => {
      if (knownVersion !== undefined) {
        const version = (this.#tenantVersion.get(tenantId) as number | undefined) ?? 0;
        if (version === knownVersion) return undefined;
      }
      const row = this.#tenantRow.get(tenantId) as Row | undefined;
      const plugins = (this.#tenantInstalls.all(tenantId) as Row[]).map((install) => ({
        pluginId: String(install.plugin_id),
        enabled: install.enabled === 1,
        installedAt: Number(install.installed_at),
      }));
      const activations = (this.#tenantActivations.all(tenantId) as Row[]).map(
        (activation): ActivationRecord => ({
          pluginId: String(activation.plugin_id),
          gates: list(activation.gates),
          hooks: list(activation.hooks),
          guards: list(activation.guards),
        }),
      );
      const version = row === undefined ? 0 : Number(row.config_version);
      return tenantConfigFromRow(row, { tenantId, version, plugins, activations });
    });
  }

  installPlugin(tenantId: string, pluginId: string, now: number): Promise<void> {
    return this.#write(() => {
      if (this.#insertInstall.run(tenantId, pluginId, now, now).changes > 0) this.#bumpTenant.run(tenantId, now);
    });
  }

  setPluginEnabled(tenantId: string, pluginId: string, enabled: boolean, now: number): Promise<boolean> {
    return this.#write(() => {
      const changed = this.#setEnabled.run(enabled ? 1 : 0, now, tenantId, pluginId).changes > 0;
      if (changed) this.#bumpTenant.run(tenantId, now);
      return changed;
    });
  }

  setPolicy(tenantId: string, policyJson: string, activity: ActivityRecord): Promise<void> {
    return this.#write(() => {
      this.#bumpTenant.run(tenantId, activity.at);
      this.#setTenantPolicy.run(policyJson, tenantId);
      this.#appendActivity(activity);
    });
  }

  setActivation(activation: ActivationRecord & { readonly tenantId: string }, activity: ActivityRecord): Promise<void> {
    return this.#write(() => {
      this.#bumpTenant.run(activation.tenantId, activity.at);
      this.#upsertActivation.run(
        activation.tenantId,
        activation.pluginId,
        JSON.stringify(activation.gates),
        JSON.stringify(activation.hooks),
        JSON.stringify(activation.guards),
        activity.at,
      );
      this.#appendActivity(activity);
    });
  }

  setRecoveryPolicy(tenantId: string, policyJson: string, activity: ActivityRecord): Promise<void> {
    return this.#write(() => {
      this.#bumpTenant.run(tenantId, activity.at);
      this.#setTenantRecovery.run(policyJson, tenantId);
      this.#appendActivity(activity);
    });
  }

  insertPluginKey(record: PluginKeyRecord): Promise<void> {
    return this.#write(() => {
      this.#insertKey.run(record.keyId, record.tenantId, record.pluginId, buffer(record.keyHash), record.createdAt);
    });
  }

  findPluginKey(keyId: string): Promise<PluginKeyRecord | undefined> {
    return this.#read(() => {
      const row = this.#findKey.get(keyId) as Row | undefined;
      return row === undefined ? undefined : pluginKeyFromRow(row);
    });
  }

  revokePluginKey(tenantId: string, keyId: string, now: number): Promise<boolean> {
    return this.#write(() => this.#revokeKey.run(now, keyId, tenantId).changes > 0);
  }

  beginOperation(begin: OperationBegin): Promise<OperationBeginResult> {
    return this.#write((): OperationBeginResult => {
      const op = begin.operation;
      if (op.state !== "running") throw new TypeError(`a new operation starts running, not ${op.state}`);
      if (begin.tenantConfigVersion !== undefined) {
        const version = (this.#tenantVersion.get(op.tenantId) as number | undefined) ?? 0;
        if (version !== begin.tenantConfigVersion) return { status: "config-changed", version };
      }
      if (begin.idempotency !== undefined) {
        const scope = begin.idempotency.scope;
        const existing = this.#findIdempotencyAny.get(...scopeValues(scope)) as Row | undefined;
        if (existing !== undefined) {
          if (Number(existing.expires_at) > op.createdAt) {
            return { status: "idempotency-exists", record: idempotencyFromRow(existing) };
          }
          this.#deleteIdempotency.run(...scopeValues(scope));
        }
      }
      if (begin.consumeToken !== undefined) {
        const used = this.#findToken.get(op.tenantId, begin.consumeToken.tokenId) as Row | undefined;
        if (used !== undefined) return { status: "token-used", consumed: tokenFromRow(used) };
        this.#insertToken.run(
          op.tenantId,
          begin.consumeToken.tokenId,
          op.operationId,
          op.callerPluginId,
          op.actorUserId,
          begin.consumeToken.consumedAt,
          begin.consumeToken.expiresAt,
        );
      }
      if (begin.idempotency !== undefined) {
        this.#insertIdempotency.run(
          ...scopeValues(begin.idempotency.scope),
          begin.idempotency.inputDigest,
          op.operationId,
          op.createdAt,
          begin.idempotency.expiresAt,
        );
      }
      this.#insertOperation.run(
        op.operationId,
        op.tenantId,
        op.callerPluginId,
        op.actorUserId,
        op.providerPluginId,
        op.tool,
        op.state,
        op.errorCode ?? null,
        op.createdAt,
        null,
        op.leaseOwner,
        op.leaseEpoch,
        op.leaseExpiresAt,
        buffer(op.sealedInput),
      );
      return { status: "started" };
    });
  }

  settleOperation(settle: OperationSettle): Promise<OperationSettleResult> {
    return this.#write((): OperationSettleResult => {
      checkSettleState(settle);
      const changes = this.#settleOperation.run(...settleValues(settle)).changes;
      if (changes === 0) {
        return unsettled(settle.operationId, this.#operationLease.get(settle.operationId, settle.tenantId) as string | undefined);
      }
      this.#appendActivity(settle.activity);
      if (settle.extraActivity !== undefined) for (const event of settle.extraActivity) this.#appendActivity(event);
      if (settle.outbox !== undefined) {
        for (const item of settle.outbox) {
          this.#insertOutbox.run(
            item.tenantId,
            item.id,
            item.operationId,
            item.tool,
            item.hook,
            item.kind,
            buffer(item.sealedPayload),
            item.createdAt,
          );
        }
      }
      const idempotency = settle.idempotency;
      if (idempotency !== undefined) {
        const sealed = buffer(idempotency.sealedResult);
        const guardSet = idempotency.guardSet ?? null;
        if (idempotency.scope !== undefined) {
          this.#settleIdempotency.run(
            settle.state,
            settle.errorCode ?? null,
            sealed,
            guardSet,
            ...scopeValues(idempotency.scope),
            settle.operationId,
          );
        } else {
          this.#settleIdempotencyByOperation.run(
            settle.state,
            settle.errorCode ?? null,
            sealed,
            guardSet,
            settle.tenantId,
            settle.operationId,
          );
        }
      }
      return "settled";
    });
  }

  renewLeases(owner: string, leases: readonly LeaseRenewal[], expiresAt: number): Promise<number> {
    if (leases.length === 0) return Promise.resolve(0);
    return this.#write(() => {
      let renewed = 0;
      for (const lease of leases) {
        renewed += this.#renewLease.run(expiresAt, lease.operationId, lease.tenantId, owner, lease.leaseEpoch).changes;
      }
      return renewed;
    });
  }

  getOperation(tenantId: string, operationId: string): Promise<OperationRecord | undefined> {
    return this.#read(() => {
      const row = this.#getOperation.get(operationId, tenantId) as Row | undefined;
      return row === undefined ? undefined : operationFromRow(row);
    });
  }

  listExpiredLeases(now: number, limit: number): Promise<readonly OperationRecord[]> {
    return this.#read(() => (this.#expiredLeases.all(now, Math.max(1, Math.floor(limit))) as Row[]).map(operationFromRow));
  }

  takeLease(takeover: LeaseTakeover): Promise<OperationRecord | undefined> {
    return this.#write(() => {
      const changes = this.#takeLease.run(
        takeover.owner,
        takeover.expiresAt,
        takeover.operationId,
        takeover.tenantId,
        takeover.leaseEpoch,
        takeover.now,
      ).changes;
      if (changes === 0) return undefined;
      return operationFromRow(this.#getOperation.get(takeover.operationId, takeover.tenantId) as Row);
    });
  }

  insertRun(run: RunRecord): Promise<void> {
    return this.#write(() => {
      this.#insertRun.run(
        run.tenantId,
        run.runId,
        run.callerPluginId,
        run.actorUserId,
        JSON.stringify(run.allow),
        run.createdAt,
        run.expiresAt,
      );
    });
  }

  getRun(tenantId: string, runId: string): Promise<RunRecord | undefined> {
    return this.#read(() => {
      const row = this.#getRun.get(tenantId, runId) as Row | undefined;
      return row === undefined ? undefined : runFromRow(row);
    });
  }

  closeRun(tenantId: string, runId: string, closedAt: number): Promise<boolean> {
    return this.#write(() => this.#closeRun.run(closedAt, tenantId, runId).changes > 0);
  }

  createConfirmation(record: ConfirmationRecord, maxPending: number): Promise<ConfirmationCreateResult> {
    return this.#write((): ConfirmationCreateResult => {
      const owner = [record.tenantId, record.callerPluginId, record.actorUserId, record.createdAt] as const;
      const pending = Number(this.#countPending.get(...owner));
      if (pending >= maxPending) return { status: "rate-limited", retryAt: Number(this.#oldestPending.get(...owner)) };
      this.#insertConfirmation.run(...confirmationValues(record));
      return { status: "created" };
    });
  }

  getConfirmation(tenantId: string, requestId: string): Promise<ConfirmationRecord | undefined> {
    return this.#read(() => {
      const row = this.#getConfirmation.get(tenantId, requestId) as Row | undefined;
      return row === undefined ? undefined : confirmationFromRow(row);
    });
  }

  transitionConfirmation(transition: ConfirmationTransition): Promise<ConfirmationRecord | undefined> {
    return this.#write(() => {
      const statement = transition.when === "live" ? this.#transitionLive : this.#transitionExpired;
      const changes = statement.run(
        transition.to,
        transition.at,
        transition.tokenExpiresAt ?? null,
        transition.tenantId,
        transition.requestId,
        transition.at,
      ).changes;
      if (changes === 0) return undefined;
      if (transition.activity !== undefined) this.#appendActivity(transition.activity);
      return confirmationFromRow(this.#getConfirmation.get(transition.tenantId, transition.requestId) as Row);
    });
  }

  listExpiredConfirmations(now: number, limit: number): Promise<readonly ConfirmationRecord[]> {
    return this.#read(() =>
      (this.#expiredConfirmations.all(now, Math.max(1, Math.floor(limit))) as Row[]).map(confirmationFromRow),
    );
  }

  claimOutbox(tenantId: string, limit: number, now: number, claimUntil: number): Promise<readonly OutboxRecord[]> {
    return this.#write(() => {
      const rows = this.#claimableOutbox.all(tenantId, now, Math.max(1, Math.floor(limit))) as Row[];
      return rows.map((row) => {
        this.#claimOutboxRow.run(claimUntil, tenantId, row.id);
        return outboxFromRow({ ...row, attempts: Number(row.attempts) + 1, claimed_until: claimUntil });
      });
    });
  }

  ackOutbox(tenantId: string, ids: readonly string[]): Promise<number> {
    return this.#write(() => {
      let deleted = 0;
      for (const id of ids) deleted += this.#ackOutbox.run(tenantId, id).changes;
      return deleted;
    });
  }

  findIdempotency(scope: IdempotencyScope, now: number): Promise<IdempotencyRecord | undefined> {
    return this.#read(() => {
      const row = this.#findIdempotency.get(...scopeValues(scope), now) as Row | undefined;
      return row === undefined ? undefined : idempotencyFromRow(row);
    });
  }

  findConsumedToken(tenantId: string, tokenId: string): Promise<ConsumedTokenRecord | undefined> {
    return this.#read(() => {
      const row = this.#findToken.get(tenantId, tokenId) as Row | undefined;
      return row === undefined ? undefined : tokenFromRow(row);
    });
  }

  appendActivity(event: ActivityRecord): Promise<void> {
    return this.#write(() => this.#appendActivity(event));
  }

  #appendActivity(event: ActivityRecord): void {
    this.#insertActivity.run(...activityValues(event));
  }

  listActivity(tenantId: string, query: ActivityListQuery): Promise<readonly ActivityRecord[]> {
    return this.#read(() => {
      const limit = Math.max(1, Math.floor(query.limit));
      let rows: Row[];
      if (query.actorUserId !== undefined) {
        rows = (
          query.beforeId === undefined
            ? this.#listActorActivity.all(tenantId, query.actorUserId, limit)
            : this.#listActorActivityBefore.all(tenantId, query.actorUserId, query.beforeId, limit)
        ) as Row[];
      } else {
        rows = (
          query.beforeId === undefined
            ? this.#listActivity.all(tenantId, limit)
            : this.#listActivityBefore.all(tenantId, query.beforeId, limit)
        ) as Row[];
      }
      return rows.map(activityFromRow);
    });
  }

  prune(request: PruneRequest): Promise<PruneResult> {
    return this.#write((): PruneResult => {
      const consumedTokens = this.#db
        .prepare("DELETE FROM consumed_tokens WHERE expires_at <= ?")
        .run(request.consumedTokensExpiredBefore ?? request.now - CONSUMED_TOKEN_GRACE_MS).changes;
      const idempotencyRecords = this.#db
        .prepare("DELETE FROM idempotency_keys WHERE expires_at <= ?")
        .run(request.now).changes;
      // Activity ids are UUIDv7, so "older than" is a range of the primary key within each tenant.
      const floor = uuidv7Floor(request.activityBefore + 1);
      const tenants = this.#db.prepare("SELECT DISTINCT tenant_id FROM activity").pluck().all() as string[];
      const deleteOld = this.#db.prepare("DELETE FROM activity WHERE tenant_id = ? AND id < ?");
      let activityEvents = 0;
      for (const tenant of tenants) activityEvents += deleteOld.run(tenant, floor).changes;
      let confirmations = 0;
      let runs = 0;
      let outboxItems = 0;
      if (request.confirmationsExpiredBefore !== undefined) {
        confirmations = this.#db
          .prepare("DELETE FROM confirmation_requests WHERE expires_at <= ? AND (token_expires_at IS NULL OR token_expires_at <= ?)")
          .run(request.confirmationsExpiredBefore, request.confirmationsExpiredBefore).changes;
        runs = this.#db.prepare("DELETE FROM runs WHERE expires_at <= ?").run(request.confirmationsExpiredBefore).changes;
      }
      if (request.outboxBefore !== undefined) {
        outboxItems = this.#db.prepare("DELETE FROM outbox WHERE created_at <= ?").run(request.outboxBefore).changes;
      }
      return { consumedTokens, idempotencyRecords, activityEvents, confirmations, runs, outboxItems };
    });
  }

  ping(): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    try {
      return Promise.resolve(this.#ping.get() === 1);
    } catch {
      return Promise.resolve(false);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#flush();
    this.#closed = true;
    await this.#checkpointer?.stop();
    try {
      this.#db.pragma("wal_checkpoint(TRUNCATE)");
    } catch {
      // Another connection may hold the database; the WAL is checkpointed by whoever closes last.
    }
    this.#db.close();
  }
}

function asStoreError(error: unknown): unknown {
  if (error instanceof ToolpactError) return error;
  if (error instanceof TypeError) return error;
  return storeUnavailable("the SQLite store failed", error);
}
