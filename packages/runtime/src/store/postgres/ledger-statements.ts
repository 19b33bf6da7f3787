/**
 * The statements of the ledger's writes on PostgreSQL (begin, settle) and of confirmation transitions:
 * each one statement, so each is its own transaction; with the JSON rows a settle carries.
 */
import { grantUseCondition } from "../grant-rows.js";
import { ACTIVITY_COLUMNS } from "../rows.js";
import type { OutboxRecord } from "../store.js";
import { ACTIVITY_TYPES, IDEMPOTENCY_SCOPE, OPERATION_COLUMNS, TOKEN_INSERT, jsonRows, placeholders, statement, type Statement } from "./statements.js";

/** The outbox columns of `outboxRow`, and their types. */
const OUTBOX_ROW_COLUMNS = "tenant_id, id, operation_id, tool, hook, kind, sealed_payload, created_at";
const OUTBOX_ROW_TYPES = ["text", "text", "text", "text", "text", "text", "text", "int8"] as const;

/** Which steps one begin takes: each combination is its own prepared statement. */
interface BeginShape {
  readonly checkConfig: boolean;
  readonly withKey: boolean;
  readonly withToken: boolean;
  readonly withGrant: boolean;
}

/** The reason `toolpact_refuse` gives when a begin's grant ended after its key or token was written. */
export const GRANT_ENDED_REFUSAL = "grant ended";

/**
 * One begin as one statement: a chain of CTEs where each step selects from the one before, so a step
 * that finds its row taken (ON CONFLICT) stops every later one. It answers (cfg, idem, tok, op): the
 * tenant's config version and which steps wrote a row, so a refusal says why.
 * Parameters: $1..$12 the operation, then the token's 3, the key's 7, the expected config version and the
 * grant's 4 (id, tool, version, schema hash). The grant's use is the last step before the operation: a
 * conditional update whose row lock makes concurrent begins wait and re-check `uses < max_calls`.
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
  const grant = shape.checkConfig ? version + 1 : version;

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
  if (shape.withGrant) {
    // grantUseCondition's parameters 1..8: tenant, grant id, actor, caller, tool, version, schema hash, now.
    const param = ["$2::text", `$${grant}::text`, "$4::text", "$3::text", `$${grant + 1}::text`, `$${grant + 2}::int4`, `$${grant + 3}::text`, "$8::int8"];
    const after = previous === undefined ? "" : ` AND EXISTS (SELECT 1 FROM ${previous})`;
    steps.push(`grnt AS (UPDATE grants SET uses = uses + 1 WHERE ${grantUseCondition((n) => param[n - 1]!)}${after} RETURNING 1)`);
    previous = "grnt";
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
  // A key or token written before the grant turned out ended is undone the same way.
  const written = shape.withToken ? "tok" : shape.withKey ? "idem" : undefined;
  const undoGrant =
    shape.withGrant && written !== undefined
      ? `, CASE WHEN ${flag(written, true)} = 1 AND ${flag("grnt", true)} = 0 THEN toolpact_refuse('${GRANT_ENDED_REFUSAL}') END AS grant_refused`
      : "";
  const name = `begin${shape.checkConfig ? "_cfg" : ""}${shape.withKey ? "_key" : ""}${shape.withToken ? "_token" : ""}${shape.withGrant ? "_grant" : ""}`;
  return statement(
    name,
    `WITH ${steps.join(",\n")}
     SELECT ${shape.checkConfig ? "(SELECT version FROM cfg)" : "NULL::int8"} AS cfg, ${flag("idem", shape.withKey)} AS idem,
       ${flag("tok", shape.withToken)} AS tok, ${flag("grnt", shape.withGrant)} AS grnt, (SELECT count(*) FROM op)::int AS op${undo}${undoGrant}`,
  );
}

/** The sixteen begin statements, indexed by `withGrant * 8 + checkConfig * 4 + withKey * 2 + withToken`. */
export const BEGIN_STATEMENTS: readonly Statement[] = Array.from({ length: 16 }, (_, index) =>
  beginStatement({ withGrant: (index & 8) !== 0, checkConfig: (index & 4) !== 0, withKey: (index & 2) !== 0, withToken: (index & 1) !== 0 }),
);

/** How a settle finds the operation's idempotency record: not at all, by its scope, or by operation id. */
export type SettleKey = "none" | "scope" | "operation";

/**
 * One settle as one statement: the lease-guarded update, then (only if it matched) the activity event,
 * the extra events and outbox rows (as JSON lists) and the idempotency outcome, all or nothing.
 * Parameters: $1..$7 the settle, $8.. the event, then the key's (sealed result, guard set, and scope),
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
  let next = 8 + ACTIVITY_TYPES.length;
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
  if (extras) steps.push(...extraRows(next, next + 1, "settled"));
  return statement(
    `settle_${key}${extras ? "_extras" : ""}`,
    `WITH ${steps.join(",\n")}
     SELECT (SELECT count(*) FROM settled)::int AS settled`,
  );
}

/** The six settle statements, by how the idempotency record is found and whether extra rows come along. */
export const SETTLE_STATEMENTS: Readonly<Record<`${SettleKey}:${boolean}`, Statement>> = {
  "none:false": settleStatement("none", false),
  "none:true": settleStatement("none", true),
  "scope:false": settleStatement("scope", false),
  "scope:true": settleStatement("scope", true),
  "operation:false": settleStatement("operation", false),
  "operation:true": settleStatement("operation", true),
};

/** The rows a settle may carry besides its event, as JSON lists `$events` and `$outbox` (see `jsonRows`), written only if `guard` has a row. */
function extraRows(events: number, outbox: number, guard: string): string[] {
  return [
    `more_logged AS (
      INSERT INTO activity (${ACTIVITY_COLUMNS}) SELECT ${ACTIVITY_COLUMNS}
      FROM ${jsonRows(events, ACTIVITY_COLUMNS, ACTIVITY_TYPES)} AS e WHERE EXISTS (SELECT 1 FROM ${guard})
      RETURNING 1)`,
    `staged AS (
      INSERT INTO outbox (tenant_id, id, operation_id, tool, hook, kind, sealed_payload, created_at, attempts, claimed_until)
      SELECT tenant_id, id, operation_id, tool, hook, kind, decode(sealed_payload, 'base64'), created_at, 0, NULL
      FROM ${jsonRows(outbox, OUTBOX_ROW_COLUMNS, OUTBOX_ROW_TYPES)} AS o
      WHERE EXISTS (SELECT 1 FROM ${guard})
      RETURNING 1)`,
  ];
}

/**
 * A read's operation, written once and already settled, with its event (and extra events and outbox
 * rows) in one statement; with `checkConfig`, only while the tenant's config is at the version the call
 * was decided under. A read has no effect to order against a config change, so the version is read
 * without a row lock (the call is placed at this statement's snapshot). Answers (cfg, recorded).
 * Parameters: $1..$12 the operation (as a begin's), $13 its state, $14 its settle time, $15.. the event, then
 * the extras' two JSON lists, then the version.
 */
function recordStatement(checkConfig: boolean, extras: boolean): Statement {
  const event = 15;
  let next = event + ACTIVITY_TYPES.length;
  const lists = next;
  if (extras) next += 2;
  const columns = `${OPERATION_COLUMNS}, settled_at`;
  const values =
    "$1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $13::text, $7::text, $8::int8, $9::text, $10::int8, $11::int8, $12::bytea, $14::int8";
  const steps: string[] = [];
  if (checkConfig) {
    steps.push(
      "cfg AS (SELECT COALESCE((SELECT config_version FROM tenants WHERE tenant_id = $2::text), 0) AS version)",
      `op AS (INSERT INTO operations (${columns}) SELECT ${values} FROM cfg WHERE version = $${next}::int8 RETURNING 1)`,
    );
  } else {
    steps.push(`op AS (INSERT INTO operations (${columns}) VALUES (${values}) RETURNING 1)`);
  }
  steps.push(`logged AS (INSERT INTO activity (${ACTIVITY_COLUMNS}) SELECT ${placeholders(event, ACTIVITY_TYPES)} FROM op RETURNING 1)`);
  if (extras) steps.push(...extraRows(lists, lists + 1, "op"));
  return statement(
    `record${checkConfig ? "_cfg" : ""}${extras ? "_extras" : ""}`,
    `WITH ${steps.join(",\n")}
     SELECT ${checkConfig ? "(SELECT version FROM cfg)" : "NULL::int8"} AS cfg, (SELECT count(*) FROM op)::int AS recorded`,
  );
}

/** The four statements that record a read, by `checkConfig * 2 + extras`. */
export const RECORD_STATEMENTS: readonly Statement[] = Array.from({ length: 4 }, (_, index) => recordStatement((index & 2) !== 0, (index & 1) !== 0));

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

/** The four transition statements, by when they apply and whether an event is recorded with them. */
export const TRANSITION_STATEMENTS: Readonly<Record<`${"live" | "expired"}:${boolean}`, Statement>> = {
  "live:false": transitionStatement("live", false),
  "live:true": transitionStatement("live", true),
  "expired:false": transitionStatement("expired", false),
  "expired:true": transitionStatement("expired", true),
};

/** An outbox row as one row of a `jsonRows` list (OUTBOX_ROW_COLUMNS), its sealed payload in base64. */
export function outboxRow(item: OutboxRecord): unknown[] {
  const payload = Buffer.from(item.sealedPayload.buffer, item.sealedPayload.byteOffset, item.sealedPayload.byteLength).toString("base64");
  return [item.tenantId, item.id, item.operationId, item.tool, item.hook, item.kind, payload, item.createdAt];
}
