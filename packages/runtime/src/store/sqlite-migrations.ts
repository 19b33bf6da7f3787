/** One schema step; applied in order, each at most once, recorded in `schema_migrations`. */
export interface SqliteMigration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

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
];
