/** The PostgreSQL store's statements: each built once and run as a named prepared statement. */
import { ACTIVITY_COLUMNS, openConfirmationSql } from "../rows.js";

/**
 * A named prepared statement: parsed once per connection. `writes`: it changes rows (its answer says
 * whether it committed). `rowMode: "array"`: its rows come as arrays of values in select order.
 */
export type Statement = { readonly name: string; readonly text: string; readonly writes: boolean; readonly rowMode?: "array" };

/** A statement named `toolpact_<name>`. */
export const statement = (name: string, text: string, rowMode?: "array"): Statement => ({
  name: `toolpact_${name}`,
  text,
  writes: !/^\s*SELECT\b/i.test(text) || /\b(INSERT|UPDATE|DELETE)\b/i.test(text),
  ...(rowMode === undefined ? {} : { rowMode }),
});

/** `$start::type, $start+1::type, ...`: typed placeholders, so INSERT ... SELECT never guesses a type. */
export function placeholders(start: number, types: readonly string[]): string {
  return types.map((type, index) => `$${start + index}::${type}`).join(", ");
}

/** The PostgreSQL types of ACTIVITY_COLUMNS. */
export const ACTIVITY_TYPES = [
  "text",
  "text",
  "int8",
  "text",
  "text",
  "text",
  "text",
  "text",
  "int4",
  "text",
  "text",
  "text",
  "text",
  "text",
  "text",
  "text",
  "text",
  "float8",
  "text",
  "text",
  "text",
  "text",
  "text",
  "text",
  "text",
  "text",
  "text",
  "text",
  "text",
] as const;
/**
 * Rows that come in a list, as a subquery with `columns` for its column names: `$param` is one JSON array
 * of rows, each row an array of its values in `columns` order, read back as `types`. Arrays rather than
 * objects: an object per row repeats every column's name, and building, sending and parsing those names
 * was most of the cost of a batch of records.
 */
export function jsonRows(param: number, columns: string, types: readonly string[]): string {
  const names = columns.split(",").map((column) => column.trim());
  if (names.length !== types.length) throw new Error(`jsonRows: ${names.length} columns but ${types.length} types`);
  const read = names.map((name, index) => `(r->>${index})::${types[index]} AS ${name}`).join(", ");
  return `(SELECT ${read} FROM jsonb_array_elements($${param}::jsonb) AS list(r))`;
}

/** The columns a begin writes into `operations`. */
export const OPERATION_COLUMNS =
  "operation_id, tenant_id, caller_plugin_id, actor_user_id, provider_plugin_id, tool, state, error_code, created_at, " +
  "lease_owner, lease_epoch, lease_expires_at, sealed_input";
/** The head of the insert of a consumed token id. */
export const TOKEN_INSERT = "INSERT INTO consumed_tokens (tenant_id, token_id, operation_id, caller_plugin_id, actor_user_id, consumed_at, expires_at)";
/** The columns an idempotency key is unique over. */
export const IDEMPOTENCY_SCOPE = "tenant_id, caller_plugin_id, actor_user_id, tool, key_hash";

const TENANT_BUMP = `ON CONFLICT (tenant_id) DO UPDATE SET config_version = tenants.config_version + 1, updated_at = EXCLUDED.updated_at`;

/** Sets one JSON text column of the tenant ($2 at $3), bumping its config version, and records the event ($4..). */
function setTenantColumn(name: string, column: "policy" | "recovery_policy"): Statement {
  return statement(
    name,
    `WITH bumped AS (
       INSERT INTO tenants (tenant_id, config_version, ${column}, updated_at) VALUES ($1::text, 1, $2::text, $3::int8)
       ON CONFLICT (tenant_id) DO UPDATE SET config_version = tenants.config_version + 1, ${column} = EXCLUDED.${column},
         updated_at = EXCLUDED.updated_at
       RETURNING 1)
     INSERT INTO activity (${ACTIVITY_COLUMNS}) SELECT ${placeholders(4, ACTIVITY_TYPES)} FROM bumped`,
  );
}

/** Deletes at most $2 rows of `table` whose `expires_at` is at or before $1 (one chunk of a prune). */
function pruneExpired(name: string, table: string): Statement {
  return statement(name, `DELETE FROM ${table} WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${table} WHERE expires_at <= $1::int8 LIMIT $2::int))`);
}

/** Every other statement, by name. */
export const S = {
  /** The configuration in one snapshot; installs and policy only when the version moved from $2. */
  loadTenant: statement(
    "load_tenant",
    `SELECT t.config_version,
       CASE WHEN COALESCE(t.config_version, 0) = $2::int8 THEN NULL ELSE t.policy END AS policy,
       CASE WHEN COALESCE(t.config_version, 0) = $2::int8 THEN NULL ELSE t.recovery_policy END AS recovery_policy,
       CASE WHEN COALESCE(t.config_version, 0) = $2::int8 THEN NULL ELSE (
         SELECT COALESCE(json_agg(json_build_array(i.plugin_id, i.enabled, i.installed_at) ORDER BY i.plugin_id), '[]'::json)
         FROM plugin_installs i WHERE i.tenant_id = $1::text) END AS plugins,
       CASE WHEN COALESCE(t.config_version, 0) = $2::int8 THEN NULL ELSE (
         SELECT COALESCE(json_agg(json_build_array(a.plugin_id, a.gates, a.hooks, a.guards) ORDER BY a.plugin_id), '[]'::json)
         FROM plugin_activations a WHERE a.tenant_id = $1::text) END AS activations
     FROM (SELECT $1::text AS tenant_id) k LEFT JOIN tenants t ON t.tenant_id = k.tenant_id`,
  ),
  tenantIds: statement("tenant_ids", `SELECT tenant_id FROM tenants ORDER BY tenant_id COLLATE "C" LIMIT $1::int8`),
  installPlugin: statement(
    "install_plugin",
    `WITH installed AS (
       INSERT INTO plugin_installs (tenant_id, plugin_id, enabled, installed_at, updated_at) VALUES ($1::text, $2::text, true, $3::int8, $3::int8)
       ON CONFLICT (tenant_id, plugin_id) DO NOTHING RETURNING tenant_id)
     INSERT INTO tenants (tenant_id, config_version, policy, updated_at) SELECT tenant_id, 1, NULL, $3::int8 FROM installed ${TENANT_BUMP}`,
  ),
  setPluginEnabled: statement(
    "set_plugin_enabled",
    `WITH changed AS (
       UPDATE plugin_installs SET enabled = $3::boolean, updated_at = $4::int8 WHERE tenant_id = $1::text AND plugin_id = $2::text
       RETURNING tenant_id),
     bumped AS (
       INSERT INTO tenants (tenant_id, config_version, policy, updated_at) SELECT tenant_id, 1, NULL, $4::int8 FROM changed ${TENANT_BUMP}
       RETURNING 1)
     SELECT (SELECT count(*) FROM changed)::int AS changed`,
  ),
  setPolicy: setTenantColumn("set_policy", "policy"),
  setActivation: statement(
    "set_activation",
    `WITH bumped AS (
       INSERT INTO tenants (tenant_id, config_version, policy, updated_at) VALUES ($1::text, 1, NULL, $2::int8) ${TENANT_BUMP}
       RETURNING 1),
     activated AS (
       INSERT INTO plugin_activations (tenant_id, plugin_id, gates, hooks, guards, updated_at)
       SELECT $1::text, $3::text, $4::text[], $5::text[], $6::text[], $2::int8 FROM bumped
       ON CONFLICT (tenant_id, plugin_id) DO UPDATE SET gates = EXCLUDED.gates, hooks = EXCLUDED.hooks,
         guards = EXCLUDED.guards, updated_at = EXCLUDED.updated_at
       RETURNING 1)
     INSERT INTO activity (${ACTIVITY_COLUMNS}) SELECT ${placeholders(7, ACTIVITY_TYPES)} FROM activated`,
  ),
  setRecoveryPolicy: setTenantColumn("set_recovery_policy", "recovery_policy"),
  insertKey: statement(
    "insert_key",
    `INSERT INTO plugin_keys (key_id, tenant_id, plugin_id, key_hash, created_at, revoked_at)
     VALUES ($1::text, $2::text, $3::text, $4::bytea, $5::int8, NULL)`,
  ),
  listPluginKeys: statement("list_plugin_keys", "SELECT * FROM plugin_keys WHERE tenant_id = $1::text ORDER BY created_at, key_id LIMIT $2::int"),
  findKey: statement(
    "find_key",
    `SELECT k.key_id, k.tenant_id, k.plugin_id, k.key_hash, k.created_at, k.revoked_at, t.config_version AS tenant_config_version
     FROM plugin_keys k LEFT JOIN tenants t ON t.tenant_id = k.tenant_id WHERE k.key_id = $1::text`,
  ),
  /** Revoking moves the tenant's config version: a commit that checks the version sees the revocation. */
  revokeKey: statement(
    "revoke_key",
    `WITH revoked AS (
       UPDATE plugin_keys SET revoked_at = $1::int8 WHERE key_id = $2::text AND tenant_id = $3::text AND revoked_at IS NULL
       RETURNING tenant_id),
     bumped AS (
       INSERT INTO tenants (tenant_id, config_version, policy, updated_at) SELECT tenant_id, 1, NULL, $1::int8 FROM revoked ${TENANT_BUMP}
       RETURNING 1)
     SELECT (SELECT count(*) FROM revoked)::int AS revoked, (SELECT count(*) FROM bumped)::int AS bumped`,
  ),
  operationState: statement("operation_state", "SELECT state FROM operations WHERE operation_id = $1::text AND tenant_id = $2::text"),
  renewLeases: statement(
    "renew_leases",
    `UPDATE operations o SET lease_expires_at = $1::int8
     FROM unnest($2::text[], $3::text[], $4::int8[]) AS r(operation_id, tenant_id, lease_epoch)
     WHERE o.operation_id = r.operation_id AND o.tenant_id = r.tenant_id AND o.lease_epoch = r.lease_epoch
       AND o.lease_owner = $5::text AND o.state = 'running'`,
  ),
  getOperation: statement("get_operation", "SELECT * FROM operations WHERE operation_id = $1::text AND tenant_id = $2::text"),
  expiredLeases: statement(
    "expired_leases",
    "SELECT * FROM operations WHERE state = 'running' AND lease_expires_at <= $1::int8 ORDER BY lease_expires_at LIMIT $2::int",
  ),
  /** Only the expired lease at the epoch the caller saw: of instances racing for it, one gets it. */
  takeLease: statement(
    "take_lease",
    `UPDATE operations SET lease_owner = $1::text, lease_epoch = lease_epoch + 1, lease_expires_at = $2::int8,
       recovery_attempts = recovery_attempts + 1
     WHERE operation_id = $3::text AND tenant_id = $4::text AND state = 'running' AND lease_epoch = $5::int8
       AND lease_expires_at <= $6::int8
     RETURNING *`,
  ),
  insertRun: statement(
    "insert_run",
    `INSERT INTO runs (tenant_id, run_id, caller_plugin_id, actor_user_id, allow, created_at, expires_at, closed_at)
     VALUES ($1::text, $2::text, $3::text, $4::text, $5::text[], $6::int8, $7::int8, NULL)`,
  ),
  getRun: statement("get_run", "SELECT * FROM runs WHERE tenant_id = $1::text AND run_id = $2::text"),
  closeRun: statement("close_run", "UPDATE runs SET closed_at = $1::int8 WHERE tenant_id = $2::text AND run_id = $3::text AND closed_at IS NULL"),
  /**
   * Inserts a pending request unless its (tenant, caller, actor) has $16 live ones; answers the count and
   * the oldest expiry. Runs after the owner's advisory lock, so its count sees every earlier insert.
   */
  createConfirmation: statement(
    "create_confirmation",
    `WITH pending AS (
       SELECT count(*)::int AS n, MIN(expires_at) AS oldest FROM confirmation_requests
       WHERE tenant_id = $1::text AND caller_plugin_id = $5::text AND actor_user_id = $6::text AND status = 'pending'
         AND expires_at > $13::int8),
     created AS (
       INSERT INTO confirmation_requests (tenant_id, request_id, tool, provider_plugin_id, caller_plugin_id, actor_user_id,
         digest, digest_kid, schema_hash, effect, mode, run_id, status, created_at, expires_at, decided_at, sealed_preview,
         token_expires_at)
       SELECT ${placeholders(1, ["text", "text", "text", "text", "text", "text", "text", "text", "text", "text", "text", "text"])},
         'pending', $13::int8, $14::int8, NULL, $15::bytea, NULL
       FROM pending WHERE n < $16::int
       RETURNING 1)
     SELECT n, oldest, (SELECT count(*) FROM created)::int AS created FROM pending`,
  ),
  listPendingConfirmations: statement(
    "list_pending_confirmations",
    "SELECT * FROM confirmation_requests WHERE tenant_id = $1::text AND status = 'pending' AND expires_at > $2::int8 ORDER BY expires_at LIMIT $3::int",
  ),
  getConfirmation: statement("get_confirmation", "SELECT * FROM confirmation_requests WHERE tenant_id = $1::text AND request_id = $2::text"),
  findOpenConfirmation: statement(
    "find_open_confirmation",
    openConfirmationSql(
      // run_id may be null on both sides: IS NOT DISTINCT FROM matches null with null.
      (column, index) => (column === "run_id" ? `run_id IS NOT DISTINCT FROM $${index + 1}::text` : `${column} = $${index + 1}::text`),
      (index) => `$${index + 1}::int8`,
    ),
  ),
  expiredConfirmations: statement(
    "expired_confirmations",
    "SELECT * FROM confirmation_requests WHERE status = 'pending' AND expires_at <= $1::int8 ORDER BY expires_at LIMIT $2::int",
  ),
  /** Rows another instance is claiming right now are skipped, not waited for: each row goes to one claimer. */
  claimOutbox: statement(
    "claim_outbox",
    `WITH picked AS (
       SELECT tenant_id, id FROM outbox
       WHERE tenant_id = $1::text AND (claimed_until IS NULL OR claimed_until <= $2::int8)
       ORDER BY id LIMIT $3::int
       FOR UPDATE SKIP LOCKED)
     UPDATE outbox o SET attempts = o.attempts + 1, claimed_until = $4::int8
     FROM picked WHERE o.tenant_id = picked.tenant_id AND o.id = picked.id
     RETURNING o.*`,
  ),
  ackOutbox: statement("ack_outbox", "DELETE FROM outbox WHERE tenant_id = $1::text AND id = ANY ($2::text[])"),
  findIdempotency: statement(
    "find_idempotency",
    `SELECT * FROM idempotency_keys WHERE (${IDEMPOTENCY_SCOPE}) = (${placeholders(1, ["text", "text", "text", "text", "text"])})
       AND expires_at > $6::int8`,
  ),
  findIdempotencyAny: statement(
    "find_idempotency_any",
    `SELECT * FROM idempotency_keys WHERE (${IDEMPOTENCY_SCOPE}) = (${placeholders(1, ["text", "text", "text", "text", "text"])})`,
  ),
  findToken: statement("find_token", "SELECT * FROM consumed_tokens WHERE tenant_id = $1::text AND token_id = $2::text"),
  insertActivity: statement("insert_activity", `INSERT INTO activity (${ACTIVITY_COLUMNS}) VALUES (${placeholders(1, ACTIVITY_TYPES)})`),
  listActivity: statement("list_activity", "SELECT * FROM activity WHERE tenant_id = $1::text ORDER BY id DESC LIMIT $2::int"),
  listActivityBefore: statement("list_activity_before", "SELECT * FROM activity WHERE tenant_id = $1::text AND id < $2::text ORDER BY id DESC LIMIT $3::int"),
  listCallerActivity: statement(
    "list_caller_activity",
    "SELECT * FROM activity WHERE tenant_id = $1::text AND actor_user_id = $2::text AND caller_plugin_id = $3::text ORDER BY id DESC LIMIT $4::int",
  ),
  listCallerActivityBefore: statement(
    "list_caller_activity_before",
    `SELECT * FROM activity WHERE tenant_id = $1::text AND actor_user_id = $2::text AND caller_plugin_id = $3::text AND id < $4::text
     ORDER BY id DESC LIMIT $5::int`,
  ),
  pruneTokens: pruneExpired("prune_tokens", "consumed_tokens"),
  pruneIdempotency: pruneExpired("prune_idempotency", "idempotency_keys"),
  /**
   * Activity ids are UUIDv7, so "older than" is a range of the (tenant_id, id) key in each tenant; the
   * tenants are found by skipping through that key (a loose index scan), not by reading every row.
   */
  pruneActivity: statement(
    "prune_activity",
    `WITH RECURSIVE tenants_seen AS (
       (SELECT tenant_id FROM activity ORDER BY tenant_id LIMIT 1)
       UNION ALL
       SELECT (SELECT a.tenant_id FROM activity a WHERE a.tenant_id > s.tenant_id ORDER BY a.tenant_id LIMIT 1)
       FROM tenants_seen s WHERE s.tenant_id IS NOT NULL)
     DELETE FROM activity WHERE ctid = ANY (ARRAY(
       SELECT old.ctid FROM tenants_seen s
       CROSS JOIN LATERAL (SELECT a.ctid FROM activity a WHERE a.tenant_id = s.tenant_id AND a.id < $1::text LIMIT $2::int) old
       WHERE s.tenant_id IS NOT NULL
       LIMIT $2::int))`,
  ),
  /** Checkpoints whose last event is past retention: the events they covered are gone (a small table, one statement). */
  pruneCheckpoints: statement(
    "prune_checkpoints",
    "WITH heads AS (DELETE FROM activity_chain_heads WHERE last_id < $1::text) DELETE FROM activity_checkpoints WHERE last_id < $1::text",
  ),
  pruneConfirmations: statement(
    "prune_confirmations",
    `DELETE FROM confirmation_requests WHERE ctid = ANY (ARRAY(
       SELECT ctid FROM confirmation_requests
       WHERE expires_at <= $1::int8 AND (token_expires_at IS NULL OR token_expires_at <= $1::int8) LIMIT $2::int))`,
  ),
  pruneRuns: pruneExpired("prune_runs", "runs"),
  pruneOutbox: statement("prune_outbox", "DELETE FROM outbox WHERE created_at <= $1::int8"),
  /** Operation ids are UUIDv7: "created before" is a range of the key; a running operation stays whatever its age. */
  pruneOperations: statement(
    "prune_operations",
    `DELETE FROM operations WHERE ctid = ANY (ARRAY(
       SELECT ctid FROM operations WHERE operation_id < $1::text AND state <> 'running' LIMIT $2::int))`,
  ),
  ping: statement("ping", "SELECT 1 AS ok"),
} as const;
