/**
 * Group commit of reads' records on PostgreSQL: while one record statement is in flight, the records
 * that arrive meanwhile wait and then go together, as one statement and one transaction (each still
 * checks its own tenant's config version). A lone record goes at once through its own prepared
 * statement, so a single caller waits no longer than before; under load, one round trip and one commit
 * carry many calls. Every record is committed (synchronous_commit as configured) before its call answers.
 */
import { checkWrittenSettled } from "../refusals.js";
import { ACTIVITY_COLUMNS, activityValues, operationRowValues } from "../rows.js";
import type { SettledOperationResult, SettledOperationWrite } from "../store.js";
import type { PostgresConnection } from "./connection.js";
import { recordSettledOperation } from "./ledger-writes.js";
import { ACTIVITY_TYPES, OPERATION_COLUMNS, jsonRows, statement } from "./statements.js";

/** Records one statement carries at most. */
const MAX_BATCH = 64;

/** The columns of `operationRow`, and their types: a settled operation and the config version it expects. */
const BATCH_OPERATION_COLUMNS =
  "operation_id, tenant_id, caller_plugin_id, actor_user_id, provider_plugin_id, tool, state, error_code, created_at, settled_at, " +
  "lease_owner, lease_epoch, lease_expires_at, expected";
const BATCH_OPERATION_TYPES = ["text", "text", "text", "text", "text", "text", "text", "text", "int8", "int8", "text", "int8", "int8", "int8"] as const;

/**
 * Many records as one statement: `$1` the operations (with the config version each expects, or null),
 * `$2` their events, each a JSON list of rows (`jsonRows`). Answers each operation's id, whether it was
 * written, and its tenant's version.
 */
const RECORD_BATCH = statement(
  "record_batch",
  `WITH input AS (
     SELECT * FROM ${jsonRows(1, BATCH_OPERATION_COLUMNS, BATCH_OPERATION_TYPES)} AS r),
   checked AS (
     SELECT input.*, COALESCE(t.config_version, 0) AS version FROM input LEFT JOIN tenants t ON t.tenant_id = input.tenant_id),
   op AS (
     INSERT INTO operations (${OPERATION_COLUMNS}, settled_at)
     SELECT operation_id, tenant_id, caller_plugin_id, actor_user_id, provider_plugin_id, tool, state, error_code, created_at,
       lease_owner, lease_epoch, lease_expires_at, NULL, settled_at
     FROM checked WHERE expected IS NULL OR version = expected
     RETURNING operation_id),
   logged AS (
     INSERT INTO activity (${ACTIVITY_COLUMNS}) SELECT ${ACTIVITY_COLUMNS}
     FROM ${jsonRows(2, ACTIVITY_COLUMNS, ACTIVITY_TYPES)} AS e WHERE e.operation_id IN (SELECT operation_id FROM op)
     RETURNING 1)
   SELECT checked.operation_id, checked.version, op.operation_id IS NOT NULL AS recorded
   FROM checked LEFT JOIN op ON op.operation_id = checked.operation_id`,
);

interface Job {
  readonly write: SettledOperationWrite;
  readonly resolve: (result: SettledOperationResult) => void;
  readonly reject: (error: unknown) => void;
}

/** The records of one store: at most one batch in flight; the others queue behind it. */
export class RecordBatcher {
  readonly #db: PostgresConnection;
  #queue: Job[] = [];
  #busy = false;

  constructor(db: PostgresConnection) {
    this.#db = db;
  }

  /** Records `write`; one with hook events or outbox rows goes on its own. */
  record(write: SettledOperationWrite): Promise<SettledOperationResult> {
    if ((write.extraActivity?.length ?? 0) > 0 || (write.outbox?.length ?? 0) > 0) return recordSettledOperation(this.#db, write);
    try {
      // Checked here, so that a bad write fails its own call and never the batch it would have joined.
      checkWrittenSettled(write.operation);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<SettledOperationResult>((resolve, reject) => {
      this.#queue.push({ write, resolve, reject });
      if (!this.#busy) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#busy = true;
    try {
      while (this.#queue.length > 0) {
        const jobs = this.#queue.splice(0, MAX_BATCH);
        await (jobs.length === 1 ? this.#alone(jobs[0]!) : this.#together(jobs));
      }
    } finally {
      this.#busy = false;
    }
  }

  async #alone(job: Job): Promise<void> {
    try {
      job.resolve(await recordSettledOperation(this.#db, job.write));
    } catch (error) {
      job.reject(error);
    }
  }

  /**
   * One statement for all, all or nothing: a failure fails every call in it (an UnansweredCommit too:
   * each call then reads its own operation back).
   */
  async #together(jobs: readonly Job[]): Promise<void> {
    let rows;
    try {
      rows = await this.#db.rows("could not record operations", RECORD_BATCH, [
        JSON.stringify(jobs.map((job) => operationRow(job.write))),
        JSON.stringify(jobs.map((job) => activityValues(job.write.activity))),
      ]);
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return;
    }
    const answers = new Map(rows.map((row) => [String(row.operation_id), row]));
    for (const job of jobs) {
      const row = answers.get(job.write.operation.operationId);
      if (row?.recorded === true) job.resolve({ status: "recorded" });
      else job.resolve({ status: "config-changed", version: Number(row?.version ?? 0) });
    }
  }
}

/** An operation written settled, as one row of BATCH_OPERATION_COLUMNS: with the config version it expects, or null. */
function operationRow(write: SettledOperationWrite): unknown[] {
  return [...operationRowValues(write.operation), write.tenantConfigVersion ?? null];
}
