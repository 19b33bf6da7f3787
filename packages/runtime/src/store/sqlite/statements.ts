import type Database from "better-sqlite3";
import { ACTIVITY_COLUMNS, openConfirmationSql } from "../rows.js";

/** The statements the store prepares, by name. */
type StatementName =
  | "tenantVersion"
  | "tenantRow"
  | "tenantIds"
  | "tenantInstalls"
  | "bumpTenant"
  | "setTenantPolicy"
  | "insertInstall"
  | "setEnabled"
  | "insertKey"
  | "findKey"
  | "tenantKeys"
  | "revokeKey"
  | "insertOperation"
  | "settleOperation"
  | "operationState"
  | "renewLease"
  | "getOperation"
  | "findIdempotency"
  | "findIdempotencyAny"
  | "deleteIdempotency"
  | "insertIdempotency"
  | "settleIdempotency"
  | "findToken"
  | "insertToken"
  | "insertActivity"
  | "listActivity"
  | "listActivityBefore"
  | "listCallerActivity"
  | "listCallerActivityBefore"
  | "ping"
  | "tenantActivations"
  | "upsertActivation"
  | "setTenantRecovery"
  | "expiredLeases"
  | "takeLease"
  | "settleIdempotencyByOperation"
  | "insertRun"
  | "getRun"
  | "closeRun"
  | "countPending"
  | "oldestPending"
  | "insertConfirmation"
  | "getConfirmation"
  | "pendingConfirmations"
  | "transitionLive"
  | "transitionExpired"
  | "expiredConfirmations"
  | "insertOutbox"
  | "claimableOutbox"
  | "claimOutboxRow"
  | "ackOutbox"
  | "findOpenConfirmation"
  | "dataVersion";

/** The prepared statements of one connection. */
export type SqliteStatements = { readonly [K in StatementName]: Database.Statement };

/** Every statement the SQLite store runs on the hot path, prepared once per connection. */
export function prepareStatements(db: Database.Database): SqliteStatements {
  const prepare = (sql: string): Database.Statement => db.prepare(sql);
  const pluck = (sql: string): Database.Statement => db.prepare(sql).pluck();
  const idempotencyKey = "tenant_id = ? AND caller_plugin_id = ? AND actor_user_id = ? AND tool = ? AND key_hash = ?";
  const pendingOf = "tenant_id = ? AND caller_plugin_id = ? AND actor_user_id = ? AND status = 'pending' AND expires_at > ?";
  const transition = `UPDATE confirmation_requests SET status = ?, decided_at = ?, token_expires_at = ?, sealed_preview = NULL
     WHERE tenant_id = ? AND request_id = ? AND status = 'pending'`;
  return {
    tenantVersion: pluck("SELECT config_version FROM tenants WHERE tenant_id = ?"),
    tenantRow: prepare("SELECT config_version, policy, recovery_policy FROM tenants WHERE tenant_id = ?"),
    tenantIds: pluck("SELECT tenant_id FROM tenants ORDER BY tenant_id LIMIT ?"),
    tenantInstalls: prepare("SELECT plugin_id, enabled, installed_at FROM plugin_installs WHERE tenant_id = ? ORDER BY plugin_id"),
    bumpTenant: prepare(
      `INSERT INTO tenants (tenant_id, config_version, policy, updated_at) VALUES (?, 1, NULL, ?)
       ON CONFLICT (tenant_id) DO UPDATE SET config_version = config_version + 1, updated_at = excluded.updated_at`,
    ),
    setTenantPolicy: prepare("UPDATE tenants SET policy = ? WHERE tenant_id = ?"),
    insertInstall: prepare(
      `INSERT INTO plugin_installs (tenant_id, plugin_id, enabled, installed_at, updated_at) VALUES (?, ?, 1, ?, ?)
       ON CONFLICT (tenant_id, plugin_id) DO NOTHING`,
    ),
    setEnabled: prepare("UPDATE plugin_installs SET enabled = ?, updated_at = ? WHERE tenant_id = ? AND plugin_id = ?"),
    insertKey: prepare("INSERT INTO plugin_keys (key_id, tenant_id, plugin_id, key_hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)"),
    tenantKeys: prepare("SELECT * FROM plugin_keys WHERE tenant_id = ? ORDER BY created_at, key_id LIMIT ?"),
    findKey: prepare(
      `SELECT k.key_id, k.tenant_id, k.plugin_id, k.key_hash, k.created_at, k.revoked_at, t.config_version AS tenant_config_version
       FROM plugin_keys k LEFT JOIN tenants t ON t.tenant_id = k.tenant_id WHERE k.key_id = ?`,
    ),
    revokeKey: prepare("UPDATE plugin_keys SET revoked_at = ? WHERE key_id = ? AND tenant_id = ? AND revoked_at IS NULL"),
    insertOperation: prepare(
      `INSERT INTO operations (operation_id, tenant_id, caller_plugin_id, actor_user_id, provider_plugin_id, tool, state,
         error_code, created_at, settled_at, lease_owner, lease_epoch, lease_expires_at, sealed_input)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    settleOperation: prepare(
      `UPDATE operations SET state = ?, error_code = ?, settled_at = ?, sealed_input = NULL
       WHERE operation_id = ? AND tenant_id = ? AND state = 'running' AND lease_owner = ? AND lease_epoch = ?`,
    ),
    operationState: pluck("SELECT state FROM operations WHERE operation_id = ? AND tenant_id = ?"),
    renewLease: prepare(
      `UPDATE operations SET lease_expires_at = ?
       WHERE operation_id = ? AND tenant_id = ? AND state = 'running' AND lease_owner = ? AND lease_epoch = ?`,
    ),
    getOperation: prepare("SELECT * FROM operations WHERE operation_id = ? AND tenant_id = ?"),
    findIdempotency: prepare(`SELECT * FROM idempotency_keys WHERE ${idempotencyKey} AND expires_at > ?`),
    findIdempotencyAny: prepare(`SELECT * FROM idempotency_keys WHERE ${idempotencyKey}`),
    deleteIdempotency: prepare(`DELETE FROM idempotency_keys WHERE ${idempotencyKey}`),
    insertIdempotency: prepare(
      `INSERT INTO idempotency_keys (tenant_id, caller_plugin_id, actor_user_id, tool, key_hash, input_digest, operation_id,
         state, error_code, sealed_result, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'running', NULL, NULL, ?, ?)`,
    ),
    settleIdempotency: prepare(
      `UPDATE idempotency_keys SET state = ?, error_code = ?, sealed_result = ?, guard_set = ?
       WHERE ${idempotencyKey} AND operation_id = ?`,
    ),
    findToken: prepare("SELECT * FROM consumed_tokens WHERE tenant_id = ? AND token_id = ?"),
    insertToken: prepare(
      `INSERT INTO consumed_tokens (tenant_id, token_id, operation_id, caller_plugin_id, actor_user_id, consumed_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertActivity: prepare(
      `INSERT INTO activity (${ACTIVITY_COLUMNS}) VALUES (${ACTIVITY_COLUMNS.split(",")
        .map(() => "?")
        .join(", ")})`,
    ),
    listActivity: prepare("SELECT * FROM activity WHERE tenant_id = ? ORDER BY id DESC LIMIT ?"),
    listActivityBefore: prepare("SELECT * FROM activity WHERE tenant_id = ? AND id < ? ORDER BY id DESC LIMIT ?"),
    listCallerActivity: prepare(
      "SELECT * FROM activity INDEXED BY activity_by_caller WHERE tenant_id = ? AND actor_user_id = ? AND caller_plugin_id = ? ORDER BY id DESC LIMIT ?",
    ),
    listCallerActivityBefore: prepare(
      "SELECT * FROM activity INDEXED BY activity_by_caller WHERE tenant_id = ? AND actor_user_id = ? AND caller_plugin_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
    ),
    ping: pluck("SELECT 1"),
    tenantActivations: prepare("SELECT plugin_id, gates, hooks, guards FROM plugin_activations WHERE tenant_id = ? ORDER BY plugin_id"),
    upsertActivation: prepare(
      `INSERT INTO plugin_activations (tenant_id, plugin_id, gates, hooks, guards, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, plugin_id) DO UPDATE SET gates = excluded.gates, hooks = excluded.hooks,
         guards = excluded.guards, updated_at = excluded.updated_at`,
    ),
    setTenantRecovery: prepare("UPDATE tenants SET recovery_policy = ? WHERE tenant_id = ?"),
    expiredLeases: prepare("SELECT * FROM operations WHERE state = 'running' AND lease_expires_at <= ? ORDER BY lease_expires_at LIMIT ?"),
    takeLease: prepare(
      `UPDATE operations SET lease_owner = ?, lease_epoch = lease_epoch + 1, lease_expires_at = ?,
         recovery_attempts = recovery_attempts + 1
       WHERE operation_id = ? AND tenant_id = ? AND state = 'running' AND lease_epoch = ? AND lease_expires_at <= ?`,
    ),
    settleIdempotencyByOperation: prepare(
      "UPDATE idempotency_keys SET state = ?, error_code = ?, sealed_result = ?, guard_set = ? WHERE tenant_id = ? AND operation_id = ?",
    ),
    insertRun: prepare(
      `INSERT INTO runs (tenant_id, run_id, caller_plugin_id, actor_user_id, allow, created_at, expires_at, closed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`,
    ),
    getRun: prepare("SELECT * FROM runs WHERE tenant_id = ? AND run_id = ?"),
    closeRun: prepare("UPDATE runs SET closed_at = ? WHERE tenant_id = ? AND run_id = ? AND closed_at IS NULL"),
    countPending: pluck(`SELECT COUNT(*) FROM confirmation_requests WHERE ${pendingOf}`),
    oldestPending: pluck(`SELECT MIN(expires_at) FROM confirmation_requests WHERE ${pendingOf}`),
    insertConfirmation: prepare(
      `INSERT INTO confirmation_requests (tenant_id, request_id, tool, provider_plugin_id, caller_plugin_id, actor_user_id,
         digest, digest_kid, schema_hash, effect, mode, run_id, status, created_at, expires_at, decided_at, sealed_preview,
         token_expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, NULL, ?, NULL)`,
    ),
    getConfirmation: prepare("SELECT * FROM confirmation_requests WHERE tenant_id = ? AND request_id = ?"),
    pendingConfirmations: prepare(
      "SELECT * FROM confirmation_requests WHERE tenant_id = ? AND status = 'pending' AND expires_at > ? ORDER BY expires_at LIMIT ?",
    ),
    transitionLive: prepare(`${transition} AND expires_at > ?`),
    transitionExpired: prepare(`${transition} AND expires_at <= ?`),
    expiredConfirmations: prepare("SELECT * FROM confirmation_requests WHERE status = 'pending' AND expires_at <= ? ORDER BY expires_at LIMIT ?"),
    insertOutbox: prepare(
      `INSERT INTO outbox (tenant_id, id, operation_id, tool, hook, kind, sealed_payload, created_at, attempts, claimed_until)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, NULL)`,
    ),
    claimableOutbox: prepare("SELECT * FROM outbox WHERE tenant_id = ? AND (claimed_until IS NULL OR claimed_until <= ?) ORDER BY id LIMIT ?"),
    claimOutboxRow: prepare("UPDATE outbox SET attempts = attempts + 1, claimed_until = ? WHERE tenant_id = ? AND id = ?"),
    ackOutbox: prepare("DELETE FROM outbox WHERE tenant_id = ? AND id = ?"),
    // run_id may be null on both sides: IS matches null with null. `now` is bound twice (positional).
    findOpenConfirmation: prepare(
      openConfirmationSql(
        (column) => (column === "run_id" ? "run_id IS ?" : `${column} = ?`),
        () => "?",
      ),
    ),
    dataVersion: pluck("PRAGMA data_version"),
  };
}
