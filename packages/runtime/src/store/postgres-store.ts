import { createHash } from "node:crypto";
import { Client, Pool, type PoolClient, type PoolConfig, type QueryConfig, type QueryResult } from "pg";
import { ToolpactError } from "@toolpact/contract";
import { uuidv7Floor } from "../ids.js";
import type { Logger } from "../logger.js";
import { applyPostgresMigrations, REFUSED_SQLSTATE, SCHEMA_NAME } from "./postgres-migrations.js";
import { checkSettleState, storeClosed, unsettled } from "./refusals.js";
import {
  ACTIVITY_COLUMNS,
  activityFromRow,
  activityValues,
  buffer,
  confirmationFromRow,
  confirmationValues,
  idempotencyFromRow,
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

/** Options of `createPostgresStore`. */
export interface PostgresStoreOptions {
  /** A `postgres://` or `postgresql://` connection URL. */
  readonly url: string;
  /** Keep every table in this schema (created if missing): a plain lowercase identifier. Default: the server's search_path. */
  readonly schema?: string;
  /** Connections this instance keeps at most (default 10). */
  readonly poolSize?: number;
  /** How long opening a connection, or waiting for a free one, may take before STORE_UNAVAILABLE (default 2000 ms). */
  readonly connectionTimeoutMs?: number;
  /**
   * How long one call's statement may run on the server; the client gives up 500 ms later, so a database
   * that stopped answering fails a call within about two seconds by default (default 1500 ms). Pruning
   * and migrations have longer timeouts of their own.
   */
  readonly statementTimeoutMs?: number;
  /** Names this instance's connections in `pg_stat_activity` (application_name `toolpact/<instanceId>`). */
  readonly instanceId?: string;
  /**
   * Where the details of a failure go (address, SQLSTATE, the driver's message; never the password).
   * Callers only ever get "the store is unavailable; try again shortly". Default: nowhere.
   */
  readonly logger?: Pick<Logger, "error">;
}

/** What a caller learns when the database fails a call; the details go to the store's logger. */
export const STORE_UNAVAILABLE_MESSAGE = "the store is unavailable; try again shortly";

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
  const pool = new Pool(poolConfig(settings));
  // A connection that dies while idle or checked out emits "error"; the next query on it fails and is mapped.
  pool.on("error", ignore);
  pool.on("connect", (client) => client.on("error", ignore));
  return new PostgresStore(pool, settings);
}

/**
 * Applies pending migrations to the database at `url` (in `schema` when given) and returns how many it
 * applied; `toolpact migrate` calls it. Safe while other instances start: each step is applied once.
 */
export async function migratePostgres(url: string, schema?: string): Promise<number> {
  return migrateWith(resolveSettings(schema === undefined ? { url } : { url, schema }));
}

interface Settings {
  readonly url: string;
  /** The URL without its password, for messages. */
  readonly where: string;
  readonly schema: string | undefined;
  readonly poolSize: number;
  readonly connectionTimeoutMs: number;
  readonly statementTimeoutMs: number;
  readonly applicationName: string;
  /** The URL's password, to scrub from anything logged (undefined when it has none). */
  readonly password: string | undefined;
  readonly logger: Pick<Logger, "error"> | undefined;
}

const MIGRATION_QUERY_TIMEOUT_MS = 60_000;
/** How long one prune statement may run: it deletes up to PRUNE_CHUNK rows, off the hot path. */
const PRUNE_STATEMENT_TIMEOUT_MS = 30_000;
/** The client-side margin over the server's statement timeout, for a server that stopped answering. */
const QUERY_TIMEOUT_MARGIN_MS = 500;
/** The largest page `listActivity` asks for (PostgreSQL's LIMIT is a 32-bit integer here). */
const MAX_LIMIT = 2_147_483_647;
/** Rows one prune statement deletes at most, so each stays short under the statement timeout. */
const PRUNE_CHUNK = 5000;

function resolveSettings(options: PostgresStoreOptions): Settings {
  if (!/^postgres(ql)?:\/\//i.test(options.url)) {
    throw new TypeError(`the PostgreSQL store needs a postgres:// or postgresql:// URL; got "${redact(options.url)}"`);
  }
  if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
    throw new TypeError(
      `schema "${options.schema}" is not a plain lowercase identifier: use letters a-z, digits and _ (at most 63)`,
    );
  }
  const positive = (name: string, value: number | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    if (!Number.isInteger(value) || value <= 0) throw new TypeError(`${name} must be a positive integer; got ${value}`);
    return value;
  };
  const instance = options.instanceId === undefined ? "" : `/${options.instanceId.replace(/[^\x20-\x7e]/g, "?")}`;
  return {
    url: options.url,
    where: redact(options.url),
    schema: options.schema,
    poolSize: positive("poolSize", options.poolSize, 10),
    connectionTimeoutMs: positive("connectionTimeoutMs", options.connectionTimeoutMs, 2000),
    statementTimeoutMs: positive("statementTimeoutMs", options.statementTimeoutMs, 1500),
    applicationName: `toolpact${instance}`.slice(0, 63),
    password: passwordOf(options.url),
    logger: options.logger,
  };
}

function passwordOf(url: string): string | undefined {
  try {
    const password = new URL(url).password;
    return password === "" ? undefined : password;
  } catch {
    return undefined;
  }
}

/** `postgres://user@host:port/db`: the URL without password or parameters. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username === "" ? "" : `${parsed.username}@`;
    return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`;
  } catch {
    return "(an unparsable URL)";
  }
}

function clientConfig(settings: Settings, queryTimeoutMs: number): PoolConfig {
  return {
    connectionString: settings.url,
    connectionTimeoutMillis: settings.connectionTimeoutMs,
    statement_timeout: settings.statementTimeoutMs,
    query_timeout: queryTimeoutMs,
    // A session stuck inside a transaction (a migration whose instance froze) releases its locks.
    idle_in_transaction_session_timeout: settings.statementTimeoutMs * 2,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    application_name: settings.applicationName,
    ...(settings.schema === undefined ? {} : { options: `-c search_path=${settings.schema}` }),
  };
}

/** Hot-path statements: the client waits the server's statement timeout plus a margin, then gives up. */
function poolConfig(settings: Settings): PoolConfig {
  return {
    ...clientConfig(settings, settings.statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS),
    max: settings.poolSize,
    idleTimeoutMillis: 30_000,
  };
}

async function migrateWith(settings: Settings): Promise<number> {
  const client = new Client(clientConfig(settings, MIGRATION_QUERY_TIMEOUT_MS));
  client.on("error", ignore);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(ignore);
    throw unavailable(settings, "could not connect to migrate", error);
  }
  try {
    return await applyPostgresMigrations(client, settings.schema);
  } catch (error) {
    if (error instanceof TypeError) throw error;
    throw unavailable(settings, "could not apply migrations", error);
  } finally {
    await client.end().catch(ignore);
  }
}

function ignore(): void {}

// -------------------------------------------------------------------------------------------------
// Errors

/** Node socket errors that mean the server cannot be reached. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
/** Errors `pg` and `pg-pool` raise themselves when a connection fails, times out or dies. */
const DRIVER_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|not queryable|Client was closed/i;

/** True when `error` says the database was not reached or the connection died (not an answer from the server). */
function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === "string") {
    if (NETWORK_CODES.has(code)) return true;
    // SQLSTATE 08xxx connection exception, 57P01-03 shutdown / cannot connect now, 53300 too many connections.
    if (code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03" || code === "53300") return true;
  }
  return error instanceof Error && DRIVER_MESSAGES.test(error.message);
}

/** SQLSTATEs after which a statement can simply run again: nothing of it was kept. */
const RETRYABLE = new Set(["40001", "40P01"]);

/**
 * The operator's account of a failure: where, what, why and what to check; never the password. Start-up
 * (open, migrate) throws it as it is; a call's failure goes to the log (see `failedCall`).
 */
function describeFailure(settings: Settings, what: string, cause: unknown): string {
  const code = (cause as { code?: unknown } | undefined)?.code;
  const detail = typeof code === "string" ? code : cause instanceof Error ? cause.message : String(cause);
  let text: string;
  if (isConnectionError(cause)) {
    text = `PostgreSQL at ${settings.where} ${what}: the database is unreachable (${detail}); check that it runs and that this host can reach it`;
  } else if (code === "57014") {
    text = `PostgreSQL at ${settings.where} ${what}: a statement ran past its statement timeout; the database is overloaded or a lock is held`;
  } else {
    const message = cause instanceof Error && typeof code === "string" ? `${cause.message} (SQLSTATE ${code})` : detail;
    const hint =
      typeof code === "string" && code.startsWith("23")
        ? "the row conflicts with one already stored"
        : "check the database's logs and that every instance runs the same toolpact version";
    text = `PostgreSQL at ${settings.where} ${what}: ${message}; ${hint}`;
  }
  return settings.password === undefined ? text : text.replaceAll(settings.password, "***");
}

/** A start-up failure (open, migrate): the operator reads it, so it says everything but the password. */
function unavailable(settings: Settings, what: string, cause: unknown): ToolpactError {
  return new ToolpactError("STORE_UNAVAILABLE", describeFailure(settings, what, cause), {}, { cause });
}

/**
 * A call's failure: the caller gets STORE_UNAVAILABLE_MESSAGE and nothing about the database; the
 * details go to the store's logger.
 */
function failedCall(settings: Settings, what: string, cause: unknown): ToolpactError {
  const code = (cause as { code?: unknown } | undefined)?.code;
  settings.logger?.error({
    event: "store_unavailable",
    store: "postgres",
    reason: isConnectionError(cause) ? "unreachable" : code === "57014" ? "statement_timeout" : "error",
    ...(typeof code === "string" ? { code } : {}),
    detail: describeFailure(settings, what, cause),
  });
  return new ToolpactError("STORE_UNAVAILABLE", STORE_UNAVAILABLE_MESSAGE);
}

// -------------------------------------------------------------------------------------------------
// Statements: each built once and run as a named prepared statement (parsed once per connection).

type Statement = { readonly name: string; readonly text: string };

const statement = (name: string, text: string): Statement => ({ name: `toolpact_${name}`, text });

/** `$start::type, $start+1::type, ...`: typed placeholders, so INSERT ... SELECT never guesses a type. */
function placeholders(start: number, types: readonly string[]): string {
  return types.map((type, index) => `$${start + index}::${type}`).join(", ");
}

/** The PostgreSQL types of ACTIVITY_COLUMNS. */
const ACTIVITY_TYPES = [
  "text", "text", "int8", "text", "text", "text", "text", "text", "int4", "text", "text", "text",
  "text", "text", "text", "text", "text", "float8", "text", "text",
] as const;
/** The activity columns as `jsonb_to_recordset` reads them, for events that come in a list. */
const ACTIVITY_RECORD =
  "tenant_id text, id text, at bigint, kind text, actor_user_id text, caller_plugin_id text, provider_plugin_id text, " +
  "tool text, version integer, effect text, phase text, outcome text, error_code text, error_class text, operation_id text, " +
  "confirmation_id text, target_id text, duration_ms double precision, correlation_id text, seam text";

const OPERATION_COLUMNS =
  "operation_id, tenant_id, caller_plugin_id, actor_user_id, provider_plugin_id, tool, state, error_code, created_at, " +
  "lease_owner, lease_epoch, lease_expires_at, sealed_input";
const TOKEN_INSERT =
  "INSERT INTO consumed_tokens (tenant_id, token_id, operation_id, caller_plugin_id, actor_user_id, consumed_at, expires_at)";
const IDEMPOTENCY_SCOPE = "tenant_id, caller_plugin_id, actor_user_id, tool, key_hash";

/** Which steps one begin takes: each combination is its own prepared statement. */
interface BeginShape {
  readonly checkConfig: boolean;
  readonly withKey: boolean;
  readonly withToken: boolean;
}

/**
 * One begin as one statement: a chain of CTEs where each step selects from the one before, so a step
 * that finds its row taken (ON CONFLICT) stops every later one. It answers (cfg, idem, tok, op): the
 * tenant's config version and which steps wrote a row, so a refusal says why.
 * Parameters: $1..$12 the operation, then the token's 3, the key's 7 and the expected config version.
 * The config check locks the tenant row FOR SHARE, so a config change commits before or after the
 * begin, never during it. A key taken before its token turns out used must be undone: then the
 * statement aborts itself through `toolpact_refuse` (SQLSTATE TP001), which rolls all of it back.
 */
function beginStatement(shape: BeginShape): Statement {
  let next = 13;
  const token = shape.withToken ? next : 0;
  if (shape.withToken) next += 3;
  const key = shape.withKey ? next : 0;
  if (shape.withKey) next += 7;
  const version = next;

  const steps: string[] = [];
  let previous: string | undefined;
  /** `SELECT <values> FROM <previous step>`, or `VALUES (<values>)` for the first step. */
  const from = (values: string): string => (previous === undefined ? `VALUES (${values})` : `SELECT ${values} FROM ${previous}`);
  if (shape.checkConfig) {
    steps.push(
      "cfg AS (SELECT COALESCE((SELECT config_version FROM tenants WHERE tenant_id = $2::text FOR SHARE), 0) AS version)",
      `cfg_ok AS (SELECT 1 FROM cfg WHERE version = $${version}::int8)`,
    );
    previous = "cfg_ok";
  }
  if (shape.withKey) {
    steps.push(`idem AS (
      INSERT INTO idempotency_keys (${IDEMPOTENCY_SCOPE}, input_digest, operation_id, state, created_at, expires_at)
      ${from(`${placeholders(key, ["text", "text", "text", "text", "text", "text"])}, $1::text, 'running', $8::int8, $${key + 6}::int8`)}
      ON CONFLICT (${IDEMPOTENCY_SCOPE}) DO UPDATE SET input_digest = EXCLUDED.input_digest, operation_id = EXCLUDED.operation_id,
        state = 'running', error_code = NULL, sealed_result = NULL, guard_set = NULL, created_at = EXCLUDED.created_at,
        expires_at = EXCLUDED.expires_at
      WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
      RETURNING 1)`);
    previous = "idem";
  }
  if (shape.withToken) {
    steps.push(`tok AS (
      ${TOKEN_INSERT} ${from(`$2::text, $${token}::text, $1::text, $3::text, $4::text, $${token + 1}::int8, $${token + 2}::int8`)}
      ON CONFLICT (tenant_id, token_id) DO NOTHING RETURNING 1)`);
    previous = "tok";
  }
  steps.push(`op AS (
    INSERT INTO operations (${OPERATION_COLUMNS})
    ${from("$1::text, $2::text, $3::text, $4::text, $5::text, $6::text, 'running', $7::text, $8::int8, $9::text, $10::int8, $11::int8, $12::bytea")}
    RETURNING 1)`);
  const flag = (step: string, present: boolean) => (present ? `(SELECT count(*) FROM ${step})::int` : "1");
  const undo =
    shape.withKey && shape.withToken
      ? `, CASE WHEN ${flag("idem", true)} = 1 AND ${flag("tok", true)} = 0 THEN toolpact_refuse('token already used') END AS refused`
      : "";
  const name = `begin${shape.checkConfig ? "_cfg" : ""}${shape.withKey ? "_key" : ""}${shape.withToken ? "_token" : ""}`;
  return statement(
    name,
    `WITH ${steps.join(",\n")}
     SELECT ${shape.checkConfig ? "(SELECT version FROM cfg)" : "NULL::int8"} AS cfg, ${flag("idem", shape.withKey)} AS idem,
       ${flag("tok", shape.withToken)} AS tok, (SELECT count(*) FROM op)::int AS op${undo}`,
  );
}

/** The eight begin statements, indexed by `checkConfig * 4 + withKey * 2 + withToken`. */
const BEGIN_STATEMENTS: readonly Statement[] = Array.from({ length: 8 }, (_, index) =>
  beginStatement({ checkConfig: (index & 4) !== 0, withKey: (index & 2) !== 0, withToken: (index & 1) !== 0 }),
);

/** How a settle finds the operation's idempotency record: not at all, by its scope, or by operation id. */
type SettleKey = "none" | "scope" | "operation";

/**
 * One settle as one statement: the lease-guarded update, then (only if it matched) the activity event,
 * the extra events and outbox rows (as JSON lists) and the idempotency outcome, all or nothing.
 * Parameters: $1..$7 the settle, $8..$27 the event, then the key's (sealed result, guard set, and scope),
 * then the extra events' and outbox rows' JSON.
 */
function settleStatement(key: SettleKey, extras: boolean): Statement {
  const steps = [
    `settled AS (
      UPDATE operations SET state = $1::text, error_code = $2::text, settled_at = $3::int8, sealed_input = NULL
      WHERE operation_id = $4::text AND tenant_id = $5::text AND state = 'running' AND lease_owner = $6::text AND lease_epoch = $7::int8
      RETURNING 1)`,
    `logged AS (INSERT INTO activity (${ACTIVITY_COLUMNS}) SELECT ${placeholders(8, ACTIVITY_TYPES)} FROM settled RETURNING 1)`,
  ];
  let next = 28;
  if (key !== "none") {
    const match =
      key === "scope"
        ? `(${IDEMPOTENCY_SCOPE}) = (${placeholders(next + 2, ["text", "text", "text", "text", "text"])}) AND operation_id = $4::text`
        : "tenant_id = $5::text AND operation_id = $4::text";
    steps.push(`remembered AS (
      UPDATE idempotency_keys SET state = $1::text, error_code = $2::text, sealed_result = $${next}::bytea,
        guard_set = $${next + 1}::text
      WHERE ${match} AND EXISTS (SELECT 1 FROM settled)
      RETURNING 1)`);
    next += key === "scope" ? 7 : 2;
  }
  if (extras) {
    steps.push(
      `more_logged AS (
        INSERT INTO activity (${ACTIVITY_COLUMNS}) SELECT ${ACTIVITY_COLUMNS}
        FROM jsonb_to_recordset($${next}::jsonb) AS e(${ACTIVITY_RECORD}) WHERE EXISTS (SELECT 1 FROM settled)
        RETURNING 1)`,
      `staged AS (
        INSERT INTO outbox (tenant_id, id, operation_id, tool, hook, kind, sealed_payload, created_at, attempts, claimed_until)
        SELECT tenant_id, id, operation_id, tool, hook, kind, decode(sealed_payload, 'base64'), created_at, 0, NULL
        FROM jsonb_to_recordset($${next + 1}::jsonb)
          AS o(tenant_id text, id text, operation_id text, tool text, hook text, kind text, sealed_payload text, created_at bigint)
        WHERE EXISTS (SELECT 1 FROM settled)
        RETURNING 1)`,
    );
  }
  return statement(
    `settle_${key}${extras ? "_extras" : ""}`,
    `WITH ${steps.join(",\n")}
     SELECT (SELECT count(*) FROM settled)::int AS settled`,
  );
}

const SETTLE_STATEMENTS: Readonly<Record<`${SettleKey}:${boolean}`, Statement>> = {
  "none:false": settleStatement("none", false),
  "none:true": settleStatement("none", true),
  "scope:false": settleStatement("scope", false),
  "scope:true": settleStatement("scope", true),
  "operation:false": settleStatement("operation", false),
  "operation:true": settleStatement("operation", true),
};

/** A confirmation transition: applies only while pending, and live or expired as asked; with its event or not. */
function transitionStatement(when: "live" | "expired", withActivity: boolean): Statement {
  const moved = `moved AS (
    UPDATE confirmation_requests SET status = $1::text, decided_at = $2::int8, token_expires_at = $3::int8, sealed_preview = NULL
    WHERE tenant_id = $4::text AND request_id = $5::text AND status = 'pending' AND expires_at ${when === "live" ? ">" : "<="} $2::int8
    RETURNING *)`;
  const logged = withActivity
    ? `, logged AS (INSERT INTO activity (${ACTIVITY_COLUMNS}) SELECT ${placeholders(6, ACTIVITY_TYPES)} FROM moved RETURNING 1)`
    : "";
  return statement(`transition_${when}${withActivity ? "_logged" : ""}`, `WITH ${moved}${logged} SELECT * FROM moved`);
}

const TRANSITION_STATEMENTS: Readonly<Record<`${"live" | "expired"}:${boolean}`, Statement>> = {
  "live:false": transitionStatement("live", false),
  "live:true": transitionStatement("live", true),
  "expired:false": transitionStatement("expired", false),
  "expired:true": transitionStatement("expired", true),
};

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
  return statement(
    name,
    `DELETE FROM ${table} WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${table} WHERE expires_at <= $1::int8 LIMIT $2::int))`,
  );
}

const S = {
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
  findKey: statement(
    "find_key",
    "SELECT key_id, tenant_id, plugin_id, key_hash, created_at, revoked_at FROM plugin_keys WHERE key_id = $1::text",
  ),
  revokeKey: statement(
    "revoke_key",
    "UPDATE plugin_keys SET revoked_at = $1::int8 WHERE key_id = $2::text AND tenant_id = $3::text AND revoked_at IS NULL",
  ),
  operationState: statement(
    "operation_state",
    "SELECT state FROM operations WHERE operation_id = $1::text AND tenant_id = $2::text",
  ),
  renewLeases: statement(
    "renew_leases",
    `UPDATE operations o SET lease_expires_at = $1::int8
     FROM unnest($2::text[], $3::text[], $4::int8[]) AS r(operation_id, tenant_id, lease_epoch)
     WHERE o.operation_id = r.operation_id AND o.tenant_id = r.tenant_id AND o.lease_epoch = r.lease_epoch
       AND o.lease_owner = $5::text AND o.state = 'running'`,
  ),
  getOperation: statement(
    "get_operation",
    "SELECT * FROM operations WHERE operation_id = $1::text AND tenant_id = $2::text",
  ),
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
  closeRun: statement(
    "close_run",
    "UPDATE runs SET closed_at = $1::int8 WHERE tenant_id = $2::text AND run_id = $3::text AND closed_at IS NULL",
  ),
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
  getConfirmation: statement(
    "get_confirmation",
    "SELECT * FROM confirmation_requests WHERE tenant_id = $1::text AND request_id = $2::text",
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
  findToken: statement(
    "find_token",
    "SELECT * FROM consumed_tokens WHERE tenant_id = $1::text AND token_id = $2::text",
  ),
  insertActivity: statement(
    "insert_activity",
    `INSERT INTO activity (${ACTIVITY_COLUMNS}) VALUES (${placeholders(1, ACTIVITY_TYPES)})`,
  ),
  listActivity: statement(
    "list_activity",
    "SELECT * FROM activity WHERE tenant_id = $1::text ORDER BY id DESC LIMIT $2::int",
  ),
  listActivityBefore: statement(
    "list_activity_before",
    "SELECT * FROM activity WHERE tenant_id = $1::text AND id < $2::text ORDER BY id DESC LIMIT $3::int",
  ),
  listActorActivity: statement(
    "list_actor_activity",
    "SELECT * FROM activity WHERE tenant_id = $1::text AND actor_user_id = $2::text ORDER BY id DESC LIMIT $3::int",
  ),
  listActorActivityBefore: statement(
    "list_actor_activity_before",
    `SELECT * FROM activity WHERE tenant_id = $1::text AND actor_user_id = $2::text AND id < $3::text
     ORDER BY id DESC LIMIT $4::int`,
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
  pruneConfirmations: statement(
    "prune_confirmations",
    `DELETE FROM confirmation_requests WHERE ctid = ANY (ARRAY(
       SELECT ctid FROM confirmation_requests
       WHERE expires_at <= $1::int8 AND (token_expires_at IS NULL OR token_expires_at <= $1::int8) LIMIT $2::int))`,
  ),
  pruneRuns: pruneExpired("prune_runs", "runs"),
  pruneOutbox: statement("prune_outbox", "DELETE FROM outbox WHERE created_at <= $1::int8"),
  ping: statement("ping", "SELECT 1 AS ok"),
} as const;

// -------------------------------------------------------------------------------------------------
// Rows

/** An event as one `jsonb_to_recordset` row (see ACTIVITY_RECORD). */
function activityJson(event: ActivityRecord): Record<string, unknown> {
  return {
    tenant_id: event.tenantId,
    id: event.id,
    at: event.at,
    kind: event.kind,
    actor_user_id: event.actorUserId ?? null,
    caller_plugin_id: event.callerPluginId ?? null,
    provider_plugin_id: event.providerPluginId ?? null,
    tool: event.tool ?? null,
    version: event.version ?? null,
    effect: event.effect ?? null,
    phase: event.phase,
    outcome: event.outcome,
    error_code: event.errorCode ?? null,
    error_class: event.errorClass ?? null,
    operation_id: event.operationId ?? null,
    confirmation_id: event.confirmationId ?? null,
    target_id: event.targetId ?? null,
    duration_ms: event.durationMs ?? null,
    correlation_id: event.correlationId ?? null,
    seam: event.seam ?? null,
  };
}

/** An outbox row as one `jsonb_to_recordset` row, its sealed payload in base64. */
function outboxJson(item: OutboxRecord): Record<string, unknown> {
  return {
    tenant_id: item.tenantId,
    id: item.id,
    operation_id: item.operationId,
    tool: item.tool,
    hook: item.hook,
    kind: item.kind,
    sealed_payload: Buffer.from(item.sealedPayload.buffer, item.sealedPayload.byteOffset, item.sealedPayload.byteLength).toString(
      "base64",
    ),
    created_at: item.createdAt,
  };
}

interface BeginFlags {
  /** The tenant's config version, when the begin checked it. */
  readonly cfg: number;
  readonly idem: number;
  readonly tok: number;
  readonly op: number;
}

// -------------------------------------------------------------------------------------------------

class PostgresStore implements Store {
  readonly kind = "postgres";
  readonly #pool: Pool;
  readonly #settings: Settings;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(pool: Pool, settings: Settings) {
    this.#pool = pool;
    this.#settings = settings;
  }

  /** A pooled connection, or STORE_UNAVAILABLE within the connection timeout. */
  async #connect(what: string): Promise<PoolClient> {
    if (this.#closed) throw storeClosed();
    try {
      return await this.#pool.connect();
    } catch (error) {
      throw failedCall(this.#settings, what, error);
    }
  }

  /** Hands a connection back; one that failed below the SQL level is dropped, so the pool opens a fresh one. */
  #release(client: PoolClient, error?: unknown): void {
    const broken = error !== undefined && !hasSqlState(error);
    client.release(broken ? (error instanceof Error ? error : new Error(String(error))) : undefined);
  }

  /**
   * Runs one statement (itself a transaction), retrying once or twice when the server asks to.
   * `queryTimeoutMs` overrides how long the client waits for the answer. A `toolpact_refuse` abort
   * (REFUSED_SQLSTATE) is rethrown as it is, for the caller that asked for it.
   */
  async #query(what: string, query: Statement, values: readonly unknown[], queryTimeoutMs?: number): Promise<QueryResult<Row>> {
    for (let attempt = 0; ; attempt++) {
      const client = await this.#connect(what);
      try {
        const result = await client.query<Row>(config(query, values, queryTimeoutMs));
        this.#release(client);
        return result;
      } catch (error) {
        this.#release(client, error);
        if (attempt < 2 && isRetryable(error)) continue;
        if (hasCode(error, REFUSED_SQLSTATE)) throw error;
        throw failedCall(this.#settings, what, error);
      }
    }
  }

  /** One prune chunk: off the hot path, so under PRUNE_STATEMENT_TIMEOUT_MS instead of the call timeout. */
  async #pruneChunk(query: Statement, values: readonly unknown[]): Promise<number> {
    const result = await this.#transaction("could not prune expired rows", async (client) => {
      await client.query(`SET LOCAL statement_timeout = ${PRUNE_STATEMENT_TIMEOUT_MS}`);
      return client.query<Row>(config(query, values, PRUNE_STATEMENT_TIMEOUT_MS + QUERY_TIMEOUT_MARGIN_MS));
    });
    return result.rowCount ?? 0;
  }

  async #rows(what: string, query: Statement, values: readonly unknown[]): Promise<Row[]> {
    return (await this.#query(what, query, values)).rows;
  }

  /** Runs `work` inside BEGIN/COMMIT on one connection (rolled back if it throws), retrying a deadlock. */
  async #transaction<T>(what: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const client = await this.#connect(what);
      try {
        await client.query("BEGIN");
        const result = await work(client);
        await client.query("COMMIT");
        this.#release(client);
        return result;
      } catch (error) {
        // Roll back only on a connection that answered; a broken one is dropped and the server rolls back.
        if (hasSqlState(error)) await client.query("ROLLBACK").catch(ignore);
        this.#release(client, error);
        if (attempt < 2 && isRetryable(error)) continue;
        throw failedCall(this.#settings, what, error);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------

  async loadTenantConfig(tenantId: string, knownVersion?: number): Promise<TenantConfigRecord | undefined> {
    const [row] = await this.#rows("could not load a tenant's configuration", S.loadTenant, [tenantId, knownVersion ?? null]);
    const version = row?.config_version === null || row?.config_version === undefined ? 0 : Number(row.config_version);
    if (knownVersion !== undefined && version === knownVersion) return undefined;
    const plugins = ((row?.plugins ?? []) as [string, boolean, number][]).map(([pluginId, enabled, installedAt]) => ({
      pluginId,
      enabled,
      installedAt: Number(installedAt),
    }));
    const activations = ((row?.activations ?? []) as [string, string[], string[], string[]][]).map(
      ([pluginId, gates, hooks, guards]): ActivationRecord => ({ pluginId, gates, hooks, guards }),
    );
    return tenantConfigFromRow(row, { tenantId, version, plugins, activations });
  }

  async installPlugin(tenantId: string, pluginId: string, now: number): Promise<void> {
    await this.#query("could not install a plugin", S.installPlugin, [tenantId, pluginId, now]);
  }

  async setPluginEnabled(tenantId: string, pluginId: string, enabled: boolean, now: number): Promise<boolean> {
    const [row] = await this.#rows("could not enable or disable a plugin", S.setPluginEnabled, [tenantId, pluginId, enabled, now]);
    return Number(row?.changed ?? 0) > 0;
  }

  async setPolicy(tenantId: string, policyJson: string, activity: ActivityRecord): Promise<void> {
    await this.#query("could not set a tenant's policy", S.setPolicy, [tenantId, policyJson, activity.at, ...activityValues(activity)]);
  }

  async setActivation(activation: ActivationRecord & { readonly tenantId: string }, activity: ActivityRecord): Promise<void> {
    await this.#query("could not set a plugin's activation", S.setActivation, [
      activation.tenantId,
      activity.at,
      activation.pluginId,
      activation.gates,
      activation.hooks,
      activation.guards,
      ...activityValues(activity),
    ]);
  }

  async setRecoveryPolicy(tenantId: string, policyJson: string, activity: ActivityRecord): Promise<void> {
    await this.#query("could not set a tenant's recovery policy", S.setRecoveryPolicy, [
      tenantId,
      policyJson,
      activity.at,
      ...activityValues(activity),
    ]);
  }

  async insertPluginKey(record: PluginKeyRecord): Promise<void> {
    await this.#query("could not store a plugin key", S.insertKey, [
      record.keyId,
      record.tenantId,
      record.pluginId,
      buffer(record.keyHash),
      record.createdAt,
    ]);
  }

  async findPluginKey(keyId: string): Promise<PluginKeyRecord | undefined> {
    const [row] = await this.#rows("could not look up a plugin key", S.findKey, [keyId]);
    return row === undefined ? undefined : pluginKeyFromRow(row);
  }

  async revokePluginKey(tenantId: string, keyId: string, now: number): Promise<boolean> {
    return ((await this.#query("could not revoke a plugin key", S.revokeKey, [now, keyId, tenantId])).rowCount ?? 0) > 0;
  }

  async beginOperation(begin: OperationBegin): Promise<OperationBeginResult> {
    const op = begin.operation;
    if (op.state !== "running") throw new TypeError(`a new operation starts running, not ${op.state}`);
    if (this.#closed) throw storeClosed();
    const values: unknown[] = [
      op.operationId,
      op.tenantId,
      op.callerPluginId,
      op.actorUserId,
      op.providerPluginId,
      op.tool,
      op.errorCode ?? null,
      op.createdAt,
      op.leaseOwner,
      op.leaseEpoch,
      op.leaseExpiresAt,
      buffer(op.sealedInput),
    ];
    const { consumeToken: token, idempotency, tenantConfigVersion } = begin;
    if (token !== undefined) values.push(token.tokenId, token.consumedAt, token.expiresAt);
    if (idempotency !== undefined) values.push(...scopeValues(idempotency.scope), idempotency.inputDigest, idempotency.expiresAt);
    if (tenantConfigVersion !== undefined) values.push(tenantConfigVersion);
    const shape =
      (tenantConfigVersion !== undefined ? 4 : 0) + (idempotency !== undefined ? 2 : 0) + (token !== undefined ? 1 : 0);
    const query = BEGIN_STATEMENTS[shape]!;

    // A refusal is answered with the row that caused it; if that row vanished meanwhile (pruned, or an
    // expired key replaced), the begin is tried again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const flags = await this.#begin(query, values, tenantConfigVersion);
      if (flags.op === 1) return { status: "started" };
      if (tenantConfigVersion !== undefined && flags.cfg !== tenantConfigVersion) {
        return { status: "config-changed", version: flags.cfg };
      }
      if (flags.idem === 0 && idempotency !== undefined) {
        const [row] = await this.#rows("could not read an idempotency record", S.findIdempotencyAny, scopeValues(idempotency.scope));
        if (row !== undefined && Number(row.expires_at) > op.createdAt) {
          return { status: "idempotency-exists", record: idempotencyFromRow(row) };
        }
      } else if (flags.tok === 0 && token !== undefined) {
        const [row] = await this.#rows("could not read a consumed token id", S.findToken, [op.tenantId, token.tokenId]);
        if (row !== undefined) return { status: "token-used", consumed: tokenFromRow(row) };
      }
    }
    throw new ToolpactError(
      "STORE_UNAVAILABLE",
      `operation ${op.operationId} could not begin: the token or idempotency record it conflicted with kept changing; try again`,
    );
  }

  async #begin(query: Statement, values: readonly unknown[], configVersion = 0): Promise<BeginFlags> {
    try {
      return flagsOf((await this.#rows("could not begin an operation", query, values))[0]);
    } catch (error) {
      // The key was free but the token used: the statement undid itself (see `beginStatement`).
      if (hasCode(error, REFUSED_SQLSTATE)) return { cfg: configVersion, idem: 1, tok: 0, op: 0 };
      throw error;
    }
  }

  async settleOperation(settle: OperationSettle): Promise<OperationSettleResult> {
    checkSettleState(settle);
    const values = [...settleValues(settle), ...activityValues(settle.activity)];
    const idempotency = settle.idempotency;
    let key: SettleKey = "none";
    if (idempotency !== undefined) {
      values.push(buffer(idempotency.sealedResult), idempotency.guardSet ?? null);
      if (idempotency.scope === undefined) key = "operation";
      else {
        key = "scope";
        values.push(...scopeValues(idempotency.scope));
      }
    }
    const extras = (settle.extraActivity?.length ?? 0) > 0 || (settle.outbox?.length ?? 0) > 0;
    if (extras) {
      values.push(JSON.stringify((settle.extraActivity ?? []).map(activityJson)), JSON.stringify((settle.outbox ?? []).map(outboxJson)));
    }
    const [row] = await this.#rows("could not settle an operation", SETTLE_STATEMENTS[`${key}:${extras}`], values);
    if (Number(row?.settled ?? 0) === 1) return "settled";

    // Nothing was written; read the operation afresh to say why (another settle may have just committed).
    const [current] = await this.#rows("could not read an operation", S.operationState, [settle.operationId, settle.tenantId]);
    return unsettled(settle.operationId, current === undefined ? undefined : String(current.state));
  }

  async renewLeases(owner: string, leases: readonly LeaseRenewal[], expiresAt: number): Promise<number> {
    if (leases.length === 0) return 0;
    const result = await this.#query("could not renew leases", S.renewLeases, [
      expiresAt,
      leases.map((lease) => lease.operationId),
      leases.map((lease) => lease.tenantId),
      leases.map((lease) => lease.leaseEpoch),
      owner,
    ]);
    return result.rowCount ?? 0;
  }

  async getOperation(tenantId: string, operationId: string): Promise<OperationRecord | undefined> {
    const [row] = await this.#rows("could not read an operation", S.getOperation, [operationId, tenantId]);
    return row === undefined ? undefined : operationFromRow(row);
  }

  async listExpiredLeases(now: number, limit: number): Promise<readonly OperationRecord[]> {
    const rows = await this.#rows("could not list expired leases", S.expiredLeases, [now, clampLimit(limit)]);
    return rows.map(operationFromRow);
  }

  async takeLease(takeover: LeaseTakeover): Promise<OperationRecord | undefined> {
    const [row] = await this.#rows("could not take over a lease", S.takeLease, [
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
    await this.#query("could not open a run", S.insertRun, [
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
    const [row] = await this.#rows("could not read a run", S.getRun, [tenantId, runId]);
    return row === undefined ? undefined : runFromRow(row);
  }

  async closeRun(tenantId: string, runId: string, closedAt: number): Promise<boolean> {
    return ((await this.#query("could not close a run", S.closeRun, [closedAt, tenantId, runId])).rowCount ?? 0) > 0;
  }

  async createConfirmation(record: ConfirmationRecord, maxPending: number): Promise<ConfirmationCreateResult> {
    const values = [...confirmationValues(record), maxPending];
    // Count and insert must not interleave with another instance's for the same (tenant, caller, actor):
    // a transaction-level advisory lock on that owner orders them, and the count runs after it.
    const lock = `SELECT pg_advisory_xact_lock(${PENDING_LOCK_CLASS}, ${ownerLockKey(record)})`;
    const [row] = await this.#transaction("could not create a confirmation request", async (client) => {
      await client.query(lock);
      return (await client.query<Row>(config(S.createConfirmation, values))).rows;
    });
    if (Number(row?.created ?? 0) === 1) return { status: "created" };
    return { status: "rate-limited", retryAt: Number(row?.oldest) };
  }

  async getConfirmation(tenantId: string, requestId: string): Promise<ConfirmationRecord | undefined> {
    const [row] = await this.#rows("could not read a confirmation request", S.getConfirmation, [tenantId, requestId]);
    return row === undefined ? undefined : confirmationFromRow(row);
  }

  async transitionConfirmation(transition: ConfirmationTransition): Promise<ConfirmationRecord | undefined> {
    const values: unknown[] = [
      transition.to,
      transition.at,
      transition.tokenExpiresAt ?? null,
      transition.tenantId,
      transition.requestId,
    ];
    if (transition.activity !== undefined) values.push(...activityValues(transition.activity));
    const query = TRANSITION_STATEMENTS[`${transition.when}:${transition.activity !== undefined}`];
    const [row] = await this.#rows("could not decide a confirmation request", query, values);
    return row === undefined ? undefined : confirmationFromRow(row);
  }

  async listExpiredConfirmations(now: number, limit: number): Promise<readonly ConfirmationRecord[]> {
    const rows = await this.#rows("could not list expired confirmation requests", S.expiredConfirmations, [now, clampLimit(limit)]);
    return rows.map(confirmationFromRow);
  }

  async claimOutbox(tenantId: string, limit: number, now: number, claimUntil: number): Promise<readonly OutboxRecord[]> {
    const rows = await this.#rows("could not claim outbox rows", S.claimOutbox, [tenantId, now, clampLimit(limit), claimUntil]);
    return rows.map(outboxFromRow).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async ackOutbox(tenantId: string, ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    return (await this.#query("could not acknowledge outbox rows", S.ackOutbox, [tenantId, ids])).rowCount ?? 0;
  }

  async findIdempotency(scope: IdempotencyScope, now: number): Promise<IdempotencyRecord | undefined> {
    const [row] = await this.#rows("could not read an idempotency record", S.findIdempotency, [...scopeValues(scope), now]);
    return row === undefined ? undefined : idempotencyFromRow(row);
  }

  async findConsumedToken(tenantId: string, tokenId: string): Promise<ConsumedTokenRecord | undefined> {
    const [row] = await this.#rows("could not read a consumed token id", S.findToken, [tenantId, tokenId]);
    return row === undefined ? undefined : tokenFromRow(row);
  }

  async appendActivity(event: ActivityRecord): Promise<void> {
    await this.#query("could not record an activity event", S.insertActivity, activityValues(event));
  }

  async listActivity(tenantId: string, query: ActivityListQuery): Promise<readonly ActivityRecord[]> {
    const limit = clampLimit(query.limit);
    const what = "could not list activity";
    let rows: Row[];
    if (query.actorUserId !== undefined) {
      rows =
        query.beforeId === undefined
          ? await this.#rows(what, S.listActorActivity, [tenantId, query.actorUserId, limit])
          : await this.#rows(what, S.listActorActivityBefore, [tenantId, query.actorUserId, query.beforeId, limit]);
    } else {
      rows =
        query.beforeId === undefined
          ? await this.#rows(what, S.listActivity, [tenantId, limit])
          : await this.#rows(what, S.listActivityBefore, [tenantId, query.beforeId, limit]);
    }
    return rows.map(activityFromRow);
  }

  async prune(request: PruneRequest): Promise<PruneResult> {
    const drain = async (query: Statement, cutoff: unknown): Promise<number> => {
      let total = 0;
      for (;;) {
        const deleted = await this.#pruneChunk(query, [cutoff, PRUNE_CHUNK]);
        total += deleted;
        if (deleted < PRUNE_CHUNK) return total;
      }
    };
    const consumedTokens = await drain(S.pruneTokens, request.consumedTokensExpiredBefore ?? request.now - CONSUMED_TOKEN_GRACE_MS);
    const idempotencyRecords = await drain(S.pruneIdempotency, request.now);
    const activityEvents = await drain(S.pruneActivity, uuidv7Floor(request.activityBefore + 1));
    const expiredBefore = request.confirmationsExpiredBefore;
    const confirmations = expiredBefore === undefined ? 0 : await drain(S.pruneConfirmations, expiredBefore);
    const runs = expiredBefore === undefined ? 0 : await drain(S.pruneRuns, expiredBefore);
    const outboxItems =
      request.outboxBefore === undefined ? 0 : await this.#pruneChunk(S.pruneOutbox, [request.outboxBefore]);
    return { consumedTokens, idempotencyRecords, activityEvents, confirmations, runs, outboxItems };
  }

  async ping(): Promise<boolean> {
    if (this.#closed) return false;
    try {
      // A ping answers within the connection timeout, not the statement timeout: it feeds readiness checks.
      const result = await this.#query("did not answer a ping", S.ping, [], this.#settings.connectionTimeoutMs);
      return result.rows[0]?.ok === 1;
    } catch {
      return false;
    }
  }

  close(): Promise<void> {
    this.#closed = true;
    // In-flight statements finish (or time out) before the pool's connections close.
    this.#closing ??= this.#pool.end().catch(ignore);
    return this.#closing;
  }
}

/** A named prepared statement with its values (and, when given, its own client-side timeout). */
function config(query: Statement, values: readonly unknown[], queryTimeoutMs?: number): QueryConfig<unknown[]> {
  const base: QueryConfig<unknown[]> = { name: query.name, text: query.text, values: values as unknown[] };
  if (queryTimeoutMs === undefined) return base;
  const withTimeout: QueryConfig<unknown[]> & { readonly query_timeout: number } = { ...base, query_timeout: queryTimeoutMs };
  return withTimeout;
}

function flagsOf(row: Row | undefined): BeginFlags {
  return { cfg: Number(row?.cfg ?? 0), idem: Number(row?.idem ?? 0), tok: Number(row?.tok ?? 0), op: Number(row?.op ?? 0) };
}

/** An answer from the server (it carries a SQLSTATE): the connection itself is still good. */
function hasSqlState(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !isConnectionError(error);
}

/** A LIMIT PostgreSQL takes: at least 1, at most a 32-bit integer. */
function clampLimit(limit: number): number {
  return Math.min(MAX_LIMIT, Math.max(1, Math.floor(limit)));
}

/** The advisory lock class that orders confirmation creation per owner (an arbitrary constant: "cf"). */
const PENDING_LOCK_CLASS = 0x6366;

/** A 32-bit key for the (tenant, caller, actor) owner; a collision only makes two owners wait for each other. */
function ownerLockKey(owner: { tenantId: string; callerPluginId: string; actorUserId: string }): number {
  return createHash("sha256")
    .update(`${owner.tenantId}\u0000${owner.callerPluginId}\u0000${owner.actorUserId}`)
    .digest()
    .readInt32BE(0);
}

function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && RETRYABLE.has(code);
}

function hasCode(error: unknown, code: string): boolean {
  return (error as { code?: unknown } | undefined)?.code === code;
}
