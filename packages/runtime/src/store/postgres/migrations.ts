import { POSTGRES_SCHEMA_NAME_PATTERN } from "@toolpact/contract";
import type { SchemaMigration } from "../schema-migration.js";

/** One PostgreSQL schema step, recorded in `toolpact_migrations`. */
export type PostgresMigration = SchemaMigration;

/**
 * The PostgreSQL schema, as versioned migrations: the same tables and steps as SQLite's, in PostgreSQL
 * types (bigint Unix-ms times, bytea sealed payloads, boolean flags). Id columns use the "C" collation so
 * UUIDv7 ids sort by creation time on every server locale, as they do in SQLite. Never edit a released
 * step: add one.
 */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    name: "tenants, plugin keys, operations, idempotency, consumed tokens, activity",
    sql: `
CREATE TABLE tenants (
  tenant_id text COLLATE "C" PRIMARY KEY,
  config_version bigint NOT NULL,
  policy text,
  updated_at bigint NOT NULL
);

CREATE TABLE plugin_installs (
  tenant_id text COLLATE "C" NOT NULL,
  plugin_id text COLLATE "C" NOT NULL,
  enabled boolean NOT NULL,
  installed_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, plugin_id)
);

CREATE TABLE plugin_keys (
  key_id text COLLATE "C" PRIMARY KEY,
  tenant_id text COLLATE "C" NOT NULL,
  plugin_id text COLLATE "C" NOT NULL,
  key_hash bytea NOT NULL,
  created_at bigint NOT NULL,
  revoked_at bigint
);
CREATE INDEX plugin_keys_by_tenant ON plugin_keys (tenant_id, plugin_id);

CREATE TABLE operations (
  operation_id text COLLATE "C" PRIMARY KEY,
  tenant_id text COLLATE "C" NOT NULL,
  caller_plugin_id text NOT NULL,
  actor_user_id text NOT NULL,
  provider_plugin_id text NOT NULL,
  tool text NOT NULL,
  state text NOT NULL CHECK (state IN ('running', 'succeeded', 'failed', 'unknown')),
  error_code text,
  created_at bigint NOT NULL,
  settled_at bigint,
  lease_owner text NOT NULL,
  lease_epoch bigint NOT NULL,
  lease_expires_at bigint NOT NULL,
  sealed_input bytea
);

CREATE TABLE idempotency_keys (
  tenant_id text COLLATE "C" NOT NULL,
  caller_plugin_id text COLLATE "C" NOT NULL,
  actor_user_id text COLLATE "C" NOT NULL,
  tool text COLLATE "C" NOT NULL,
  key_hash text COLLATE "C" NOT NULL,
  input_digest text NOT NULL,
  operation_id text NOT NULL,
  state text NOT NULL CHECK (state IN ('running', 'succeeded', 'failed', 'unknown')),
  error_code text,
  sealed_result bytea,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, caller_plugin_id, actor_user_id, tool, key_hash)
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);

CREATE TABLE consumed_tokens (
  tenant_id text COLLATE "C" NOT NULL,
  token_id text COLLATE "C" NOT NULL,
  operation_id text NOT NULL,
  caller_plugin_id text NOT NULL,
  actor_user_id text NOT NULL,
  consumed_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, token_id)
);
CREATE INDEX consumed_tokens_by_expiry ON consumed_tokens (expires_at);

CREATE TABLE activity (
  tenant_id text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  at bigint NOT NULL,
  kind text NOT NULL,
  actor_user_id text COLLATE "C",
  caller_plugin_id text,
  provider_plugin_id text,
  tool text,
  version integer,
  effect text,
  phase text NOT NULL,
  outcome text NOT NULL,
  error_code text,
  error_class text,
  operation_id text,
  confirmation_id text,
  target_id text,
  duration_ms double precision,
  correlation_id text,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX activity_by_actor ON activity (tenant_id, actor_user_id, id);

-- Aborts the statement that calls it (and so undoes everything that statement wrote) with SQLSTATE
-- TP001: a begin whose idempotency key was free but whose token turned out used stops this way.
CREATE FUNCTION toolpact_refuse(reason text) RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION 'toolpact: %', reason USING ERRCODE = 'TP001';
END
$$;
`,
  },
  {
    version: 2,
    name: "runs, confirmation requests, activations, outbox, recovery policy, lease index",
    sql: `
ALTER TABLE tenants ADD COLUMN recovery_policy text;
ALTER TABLE operations ADD COLUMN recovery_attempts integer NOT NULL DEFAULT 0;
CREATE INDEX operations_running_by_lease ON operations (lease_expires_at) WHERE state = 'running';
ALTER TABLE activity ADD COLUMN seam text;
CREATE INDEX idempotency_keys_by_operation ON idempotency_keys (tenant_id, operation_id);

CREATE TABLE plugin_activations (
  tenant_id text COLLATE "C" NOT NULL,
  plugin_id text COLLATE "C" NOT NULL,
  gates text[] NOT NULL,
  hooks text[] NOT NULL,
  guards text[] NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, plugin_id)
);

CREATE TABLE runs (
  tenant_id text COLLATE "C" NOT NULL,
  run_id text COLLATE "C" NOT NULL,
  caller_plugin_id text NOT NULL,
  actor_user_id text NOT NULL,
  allow text[] NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  closed_at bigint,
  PRIMARY KEY (tenant_id, run_id)
);
CREATE INDEX runs_by_expiry ON runs (expires_at);

CREATE TABLE confirmation_requests (
  tenant_id text COLLATE "C" NOT NULL,
  request_id text COLLATE "C" NOT NULL,
  tool text NOT NULL,
  provider_plugin_id text NOT NULL,
  caller_plugin_id text COLLATE "C" NOT NULL,
  actor_user_id text COLLATE "C" NOT NULL,
  digest text NOT NULL,
  digest_kid text NOT NULL,
  schema_hash text NOT NULL,
  effect text NOT NULL,
  mode text NOT NULL,
  run_id text,
  status text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'cancelled')),
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  decided_at bigint,
  sealed_preview bytea,
  token_expires_at bigint,
  PRIMARY KEY (tenant_id, request_id)
);
CREATE INDEX confirmation_requests_pending ON confirmation_requests (tenant_id, caller_plugin_id, actor_user_id, expires_at)
  WHERE status = 'pending';
CREATE INDEX confirmation_requests_pending_by_expiry ON confirmation_requests (expires_at) WHERE status = 'pending';
CREATE INDEX confirmation_requests_by_expiry ON confirmation_requests (expires_at);

CREATE TABLE outbox (
  tenant_id text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  operation_id text NOT NULL,
  tool text NOT NULL,
  hook text NOT NULL,
  kind text NOT NULL,
  sealed_payload bytea NOT NULL,
  created_at bigint NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  claimed_until bigint,
  PRIMARY KEY (tenant_id, id)
);
`,
  },
  {
    version: 3,
    name: "the guards that passed an idempotency record's result",
    sql: `
ALTER TABLE idempotency_keys ADD COLUMN guard_set text;
`,
  },
  {
    version: 4,
    name: "how a call arrived, open confirmation requests by binding, change notifications",
    sql: `
ALTER TABLE activity ADD COLUMN via text;
CREATE INDEX confirmation_requests_open_by_binding ON confirmation_requests (tenant_id, caller_plugin_id, actor_user_id, digest)
  WHERE status IN ('pending', 'approved');

-- Every instance LISTENs on one channel; a payload names the schema, so instances of other schemas on the
-- same database skip it. Sent on commit only (NOTIFY is transactional).
CREATE FUNCTION toolpact_notify_tenant() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('toolpact_changes', json_build_array(TG_TABLE_SCHEMA, 'tenant', NEW.tenant_id)::text);
  RETURN NULL;
END
$$;
CREATE TRIGGER tenants_changed AFTER INSERT OR UPDATE OF config_version ON tenants
  FOR EACH ROW EXECUTE FUNCTION toolpact_notify_tenant();

CREATE FUNCTION toolpact_notify_confirmation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('toolpact_changes', json_build_array(TG_TABLE_SCHEMA, 'confirmation', NEW.tenant_id, NEW.request_id)::text);
  RETURN NULL;
END
$$;
CREATE TRIGGER confirmation_requests_decided AFTER UPDATE OF status ON confirmation_requests
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION toolpact_notify_confirmation();
`,
  },
  {
    version: 5,
    name: "used presence token ids; activity by caller plugin",
    sql: `
CREATE TABLE used_presence_tokens (
  tenant_id text COLLATE "C" NOT NULL,
  token_id text COLLATE "C" NOT NULL,
  user_id text NOT NULL,
  used_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, token_id)
);
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
ALTER TABLE activity
  ADD COLUMN authenticated_by text,
  ADD COLUMN confirmation text,
  ADD COLUMN confirmed_by text,
  ADD COLUMN manifest_version text,
  ADD COLUMN schema_hash text,
  ADD COLUMN policy_decision text,
  ADD COLUMN idempotency_key_hash text,
  ADD COLUMN chain_seq bigint,
  ADD COLUMN chain_hash text;

CREATE TABLE activity_checkpoints (
  tenant_id text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  last_id text COLLATE "C" NOT NULL,
  chain_hash text NOT NULL,
  created_at bigint NOT NULL,
  key_id text NOT NULL,
  signature text NOT NULL,
  PRIMARY KEY (tenant_id, seq)
);
`,
  },
  {
    // MCP tasks (io.modelcontextprotocol/tasks): a tool call whose wait (approval, a slow provider)
    // outlives a request. The call's input and its outcome are sealed; the rest names who may see it.
    version: 8,
    name: "tasks",
    sql: `
CREATE TABLE tasks (
  tenant_id text COLLATE "C" NOT NULL,
  task_id text COLLATE "C" NOT NULL,
  caller_plugin_id text NOT NULL,
  actor_user_id text NOT NULL,
  key_id text,
  tool text NOT NULL,
  task_status text NOT NULL CHECK (task_status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
  status_message text,
  confirmation_id text,
  confirm_url text,
  begun boolean NOT NULL,
  cancel_requested_at bigint,
  operation_id text,
  error_code text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  driver text,
  driver_until bigint NOT NULL,
  revision integer NOT NULL,
  sealed_call bytea NOT NULL,
  sealed_outcome bytea,
  PRIMARY KEY (tenant_id, task_id)
);
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
  tenant_id text COLLATE "C" NOT NULL,
  grant_id text COLLATE "C" NOT NULL,
  actor_user_id text COLLATE "C" NOT NULL,
  caller_plugin_id text COLLATE "C" NOT NULL,
  tool text COLLATE "C" NOT NULL,
  version integer NOT NULL,
  schema_hash text NOT NULL,
  constraints text,
  max_calls integer,
  uses integer NOT NULL DEFAULT 0,
  expires_at bigint NOT NULL,
  created_by text NOT NULL,
  created_at bigint NOT NULL,
  revoked_at bigint,
  PRIMARY KEY (tenant_id, grant_id)
);
CREATE INDEX grants_live_by_binding ON grants (tenant_id, actor_user_id, caller_plugin_id, tool, expires_at)
  WHERE revoked_at IS NULL;
ALTER TABLE activity ADD COLUMN grant_id text;
`,
  },
  {
    version: 10,
    name: "activity chain links kept with their checkpoint, not written into the events",
    // The checkpointer appends one row per checkpoint (its links packed, see chain-links.ts) instead of
    // updating every event it links; events linked before keep their chain_seq and chain_hash. Each
    // tenant's head (the latest checkpoint made) is kept apart, so a deleted latest checkpoint is found.
    sql: `
ALTER TABLE activity_checkpoints ADD COLUMN links bytea;
CREATE INDEX activity_checkpoints_by_last_id ON activity_checkpoints (tenant_id, last_id);
CREATE TABLE activity_chain_heads (
  tenant_id text COLLATE "C" PRIMARY KEY,
  seq bigint NOT NULL,
  last_id text COLLATE "C" NOT NULL
);
`,
  },
  {
    // A call under grants reads the actor's newest grants first (GrantFinder): from this index in that
    // order, where the primary key alone left a sort of them for every call. Instances keep each user's
    // grants in memory: a grant made, revoked or deleted is announced to the others.
    version: 11,
    name: "grants by actor, newest first; grant changes notified",
    sql: `
CREATE INDEX grants_by_actor ON grants (tenant_id, actor_user_id, created_at, grant_id);

CREATE FUNCTION toolpact_notify_grants() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('toolpact_changes', json_build_array(TG_TABLE_SCHEMA, 'grants', OLD.tenant_id, OLD.actor_user_id)::text);
  ELSE
    PERFORM pg_notify('toolpact_changes', json_build_array(TG_TABLE_SCHEMA, 'grants', NEW.tenant_id, NEW.actor_user_id)::text);
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER grants_changed AFTER INSERT OR DELETE OR UPDATE OF revoked_at, expires_at, max_calls, constraints, actor_user_id, tenant_id ON grants
  FOR EACH ROW EXECUTE FUNCTION toolpact_notify_grants();
`,
  },
];

/** Schema names toolpact accepts: a plain lowercase identifier, so it needs no quoting anywhere (one home: @toolpact/contract). */
export const SCHEMA_NAME = POSTGRES_SCHEMA_NAME_PATTERN;

/** The SQLSTATE `toolpact_refuse` raises. */
export const REFUSED_SQLSTATE = "TP001";
