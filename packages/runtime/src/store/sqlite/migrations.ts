import type Database from "better-sqlite3";
import { pendingMigrations, type SchemaMigration } from "../schema-migration.js";

/** One SQLite schema step, recorded in `schema_migrations`. */
export type SqliteMigration = SchemaMigration;

/** The SQLite schema, as versioned migrations. Never edit a released step: add one. */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    name: "tenants, plugin keys, operations, idempotency, consumed tokens, activity",
    sql: `
CREATE TABLE tenants (
  tenant_id TEXT PRIMARY KEY,
  config_version INTEGER NOT NULL,
  policy TEXT,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE plugin_installs (
  tenant_id TEXT NOT NULL,
  plugin_id TEXT NOT NULL,
  enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  installed_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, plugin_id)
) WITHOUT ROWID;

CREATE TABLE plugin_keys (
  key_id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  plugin_id TEXT NOT NULL,
  key_hash BLOB NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
) WITHOUT ROWID;
CREATE INDEX plugin_keys_by_tenant ON plugin_keys (tenant_id, plugin_id);

CREATE TABLE operations (
  operation_id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  caller_plugin_id TEXT NOT NULL,
  actor_user_id TEXT NOT NULL,
  provider_plugin_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('running', 'succeeded', 'failed', 'unknown')),
  error_code TEXT,
  created_at INTEGER NOT NULL,
  settled_at INTEGER,
  lease_owner TEXT NOT NULL,
  lease_epoch INTEGER NOT NULL,
  lease_expires_at INTEGER NOT NULL,
  sealed_input BLOB
) WITHOUT ROWID;


CREATE TABLE idempotency_keys (
  tenant_id TEXT NOT NULL,
  caller_plugin_id TEXT NOT NULL,
  actor_user_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  key_hash TEXT NOT NULL,
  input_digest TEXT NOT NULL,
  operation_id TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('running', 'succeeded', 'failed', 'unknown')),
  error_code TEXT,
  sealed_result BLOB,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, caller_plugin_id, actor_user_id, tool, key_hash)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);

CREATE TABLE consumed_tokens (
  tenant_id TEXT NOT NULL,
  token_id TEXT NOT NULL,
  operation_id TEXT NOT NULL,
  caller_plugin_id TEXT NOT NULL,
  actor_user_id TEXT NOT NULL,
  consumed_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, token_id)
) WITHOUT ROWID;
CREATE INDEX consumed_tokens_by_expiry ON consumed_tokens (expires_at);

CREATE TABLE activity (
  tenant_id TEXT NOT NULL,
  id TEXT NOT NULL,
  at INTEGER NOT NULL,
  kind TEXT NOT NULL,
  actor_user_id TEXT,
  caller_plugin_id TEXT,
  provider_plugin_id TEXT,
  tool TEXT,
  version INTEGER,
  effect TEXT,
  phase TEXT NOT NULL,
  outcome TEXT NOT NULL,
  error_code TEXT,
  error_class TEXT,
  operation_id TEXT,
  confirmation_id TEXT,
  target_id TEXT,
  duration_ms REAL,
  correlation_id TEXT,
  PRIMARY KEY (tenant_id, id)
) WITHOUT ROWID;
CREATE INDEX activity_by_actor ON activity (tenant_id, actor_user_id, id);
`,
  },
  {
    version: 2,
    name: "runs, confirmation requests, activations, outbox, recovery policy, lease index",
    sql: `
ALTER TABLE tenants ADD COLUMN recovery_policy TEXT;
ALTER TABLE operations ADD COLUMN recovery_attempts INTEGER NOT NULL DEFAULT 0;
CREATE INDEX operations_running_by_lease ON operations (lease_expires_at) WHERE state = 'running';
ALTER TABLE activity ADD COLUMN seam TEXT;
CREATE INDEX idempotency_keys_by_operation ON idempotency_keys (tenant_id, operation_id);

CREATE TABLE plugin_activations (
  tenant_id TEXT NOT NULL,
  plugin_id TEXT NOT NULL,
  gates TEXT NOT NULL,
  hooks TEXT NOT NULL,
  guards TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, plugin_id)
) WITHOUT ROWID;

CREATE TABLE runs (
  tenant_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  caller_plugin_id TEXT NOT NULL,
  actor_user_id TEXT NOT NULL,
  allow TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  closed_at INTEGER,
  PRIMARY KEY (tenant_id, run_id)
) WITHOUT ROWID;
CREATE INDEX runs_by_expiry ON runs (expires_at);

CREATE TABLE confirmation_requests (
  tenant_id TEXT NOT NULL,
  request_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  provider_plugin_id TEXT NOT NULL,
  caller_plugin_id TEXT NOT NULL,
  actor_user_id TEXT NOT NULL,
  digest TEXT NOT NULL,
  digest_kid TEXT NOT NULL,
  schema_hash TEXT NOT NULL,
  effect TEXT NOT NULL,
  mode TEXT NOT NULL,
  run_id TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'cancelled')),
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  decided_at INTEGER,
  sealed_preview BLOB,
  token_expires_at INTEGER,
  PRIMARY KEY (tenant_id, request_id)
) WITHOUT ROWID;
CREATE INDEX confirmation_requests_pending ON confirmation_requests (tenant_id, caller_plugin_id, actor_user_id, expires_at)
  WHERE status = 'pending';
CREATE INDEX confirmation_requests_pending_by_expiry ON confirmation_requests (expires_at) WHERE status = 'pending';
CREATE INDEX confirmation_requests_by_expiry ON confirmation_requests (expires_at);

CREATE TABLE outbox (
  tenant_id TEXT NOT NULL,
  id TEXT NOT NULL,
  operation_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  hook TEXT NOT NULL,
  kind TEXT NOT NULL,
  sealed_payload BLOB NOT NULL,
  created_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  claimed_until INTEGER,
  PRIMARY KEY (tenant_id, id)
) WITHOUT ROWID;
`,
  },
  {
    version: 3,
    name: "the guards that passed an idempotency record's result",
    sql: `
ALTER TABLE idempotency_keys ADD COLUMN guard_set TEXT;
`,
  },
  {
    version: 4,
    name: "how a call arrived, open confirmation requests by binding",
    sql: `
ALTER TABLE activity ADD COLUMN via TEXT;
CREATE INDEX confirmation_requests_open_by_binding ON confirmation_requests (tenant_id, caller_plugin_id, actor_user_id, digest)
  WHERE status IN ('pending', 'approved');
`,
  },
  {
    version: 5,
    name: "used presence token ids; activity by caller plugin",
    sql: `
CREATE TABLE used_presence_tokens (
  tenant_id TEXT NOT NULL,
  token_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  used_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, token_id)
) WITHOUT ROWID;
CREATE INDEX used_presence_tokens_by_expiry ON used_presence_tokens (expires_at);
CREATE INDEX activity_by_caller ON activity (tenant_id, actor_user_id, caller_plugin_id, id);
`,
  },
  {
    // Every activity query that names an actor names its caller too (activity_by_caller serves it), and
    // each index is one more page written in every call's commit.
    version: 6,
    name: "activity_by_actor dropped",
    sql: `
DROP INDEX activity_by_actor;
`,
  },
  {
    // The chain columns are written by the audit checkpointer, never by a call's own commit: a call's
    // insert stays one row and one index entry, whatever else writes at the same time.
    version: 7,
    name: "how calls were authenticated and confirmed; the activity hash chain and its signed checkpoints",
    sql: `
ALTER TABLE activity ADD COLUMN authenticated_by TEXT;
ALTER TABLE activity ADD COLUMN confirmation TEXT;
ALTER TABLE activity ADD COLUMN confirmed_by TEXT;
ALTER TABLE activity ADD COLUMN manifest_version TEXT;
ALTER TABLE activity ADD COLUMN schema_hash TEXT;
ALTER TABLE activity ADD COLUMN policy_decision TEXT;
ALTER TABLE activity ADD COLUMN idempotency_key_hash TEXT;
ALTER TABLE activity ADD COLUMN chain_seq INTEGER;
ALTER TABLE activity ADD COLUMN chain_hash TEXT;

CREATE TABLE activity_checkpoints (
  tenant_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  last_id TEXT NOT NULL,
  chain_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  key_id TEXT NOT NULL,
  signature TEXT NOT NULL,
  PRIMARY KEY (tenant_id, seq)
) WITHOUT ROWID;
`,
  },
  {
    // MCP tasks (io.modelcontextprotocol/tasks): a tool call whose wait (approval, a slow provider)
    // outlives a request. The call's input and its outcome are sealed; the rest names who may see it.
    version: 8,
    name: "tasks",
    sql: `
CREATE TABLE tasks (
  tenant_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  caller_plugin_id TEXT NOT NULL,
  actor_user_id TEXT NOT NULL,
  key_id TEXT,
  tool TEXT NOT NULL,
  task_status TEXT NOT NULL CHECK (task_status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
  status_message TEXT,
  confirmation_id TEXT,
  confirm_url TEXT,
  begun INTEGER NOT NULL CHECK (begun IN (0, 1)),
  cancel_requested_at INTEGER,
  operation_id TEXT,
  error_code TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  driver TEXT,
  driver_until INTEGER NOT NULL,
  revision INTEGER NOT NULL,
  sealed_call BLOB NOT NULL,
  sealed_outcome BLOB,
  PRIMARY KEY (tenant_id, task_id)
) WITHOUT ROWID;
CREATE INDEX tasks_open_by_driver ON tasks (driver_until) WHERE task_status IN ('working', 'input_required');
CREATE INDEX tasks_by_confirmation ON tasks (tenant_id, confirmation_id) WHERE confirmation_id IS NOT NULL;
CREATE INDEX tasks_open_by_owner ON tasks (tenant_id, caller_plugin_id, actor_user_id) WHERE task_status IN ('working', 'input_required');
CREATE INDEX tasks_by_expiry ON tasks (expires_at);
`,
  },
  {
    // A user's standing approval for one caller, tool and version (issue 26). `uses < max_calls` is the
    // conditional update that counts a use in the transaction that begins the operation.
    version: 9,
    name: "user grants; the grant that authorized a call",
    sql: `
CREATE TABLE grants (
  tenant_id TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  actor_user_id TEXT NOT NULL,
  caller_plugin_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  version INTEGER NOT NULL,
  schema_hash TEXT NOT NULL,
  constraints TEXT,
  max_calls INTEGER,
  uses INTEGER NOT NULL DEFAULT 0,
  expires_at INTEGER NOT NULL,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER,
  PRIMARY KEY (tenant_id, grant_id)
) WITHOUT ROWID;
CREATE INDEX grants_live_by_binding ON grants (tenant_id, actor_user_id, caller_plugin_id, tool, expires_at)
  WHERE revoked_at IS NULL;
ALTER TABLE activity ADD COLUMN grant_id TEXT;
`,
  },
  {
    version: 10,
    name: "activity chain links kept with their checkpoint, not written into the events",
    // The checkpointer appends one row per checkpoint (its links packed, see chain-links.ts) instead of
    // updating every event it links; events linked before keep their chain_seq and chain_hash. Each
    // tenant's head (the latest checkpoint made) is kept apart, so a deleted latest checkpoint is found.
    sql: `
ALTER TABLE activity_checkpoints ADD COLUMN links BLOB;
CREATE INDEX activity_checkpoints_by_last_id ON activity_checkpoints (tenant_id, last_id);
CREATE TABLE activity_chain_heads (
  tenant_id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  last_id TEXT NOT NULL
) WITHOUT ROWID;
`,
  },
  {
    // A call under grants reads the actor's newest grants first (GrantFinder): from this index in that
    // order, where the primary key alone left a sort of them for every call.
    version: 11,
    name: "grants by actor, newest first",
    sql: `
CREATE INDEX grants_by_actor ON grants (tenant_id, actor_user_id, created_at, grant_id);
`,
  },
];

/** Applies pending migrations in one `BEGIN IMMEDIATE` transaction, so hosts starting together apply each once. */
export function migrate(db: Database.Database, migrations: readonly SqliteMigration[]): number {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
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
