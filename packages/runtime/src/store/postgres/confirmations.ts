/**
 * Platform-mode confirmation requests on PostgreSQL: the pending-limit check with the insert (ordered per
 * owner by an advisory lock, across instances), the reads, and a pending request's one transition, which
 * this instance announces as soon as it committed (other instances hear it through NOTIFY).
 */
import { createHash } from "node:crypto";
import type { StoreChange } from "../changes.js";
import { activityValues, confirmationFromRow, confirmationValues, openConfirmationValues } from "../rows.js";
import type { ConfirmationBindingQuery, ConfirmationCreateResult, ConfirmationRecord, ConfirmationTransition } from "../store.js";
import { PostgresConnection } from "./connection.js";
import { TRANSITION_STATEMENTS } from "./ledger-statements.js";
import { S } from "./statements.js";

/** The advisory lock class that orders confirmation creation per owner (an arbitrary constant: "cf"). */
const PENDING_LOCK_CLASS = 0x6366;

/** A 32-bit key for the (tenant, caller, actor) owner; a collision only makes two owners wait for each other. */
function ownerLockKey(owner: { tenantId: string; callerPluginId: string; actorUserId: string }): number {
  return createHash("sha256").update(`${owner.tenantId}\u0000${owner.callerPluginId}\u0000${owner.actorUserId}`).digest().readInt32BE(0);
}

/** The confirmation-request methods of the PostgreSQL store. */
export class PostgresConfirmations {
  readonly #db: PostgresConnection;
  readonly #emit: (change: StoreChange) => void;

  constructor(db: PostgresConnection, emit: (change: StoreChange) => void) {
    this.#db = db;
    this.#emit = emit;
  }

  async create(record: ConfirmationRecord, maxPending: number): Promise<ConfirmationCreateResult> {
    const values = [...confirmationValues(record), maxPending];
    // Count and insert must not interleave with another instance's for the same (tenant, caller, actor):
    // a transaction-level advisory lock on that owner orders them, and the count runs after it.
    const lock = `SELECT pg_advisory_xact_lock(${PENDING_LOCK_CLASS}, ${ownerLockKey(record)})`;
    const [row] = await this.#db.transaction("could not create a confirmation request", async (client) => {
      await client.query(lock);
      return (await PostgresConnection.run(client, S.createConfirmation, values)).rows;
    });
    if (Number(row?.created ?? 0) === 1) return { status: "created" };
    return { status: "rate-limited", retryAt: Number(row?.oldest) };
  }

  async get(tenantId: string, requestId: string): Promise<ConfirmationRecord | undefined> {
    const [row] = await this.#db.rows("could not read a confirmation request", S.getConfirmation, [tenantId, requestId]);
    return row === undefined ? undefined : confirmationFromRow(row);
  }

  async pending(tenantId: string, now: number, limit: number): Promise<readonly ConfirmationRecord[]> {
    const rows = await this.#db.rows("could not list pending confirmation requests", S.listPendingConfirmations, [tenantId, now, limit]);
    return rows.map(confirmationFromRow);
  }

  async findOpen(query: ConfirmationBindingQuery): Promise<ConfirmationRecord | undefined> {
    const [row] = await this.#db.rows("could not look up open confirmation requests", S.findOpenConfirmation, openConfirmationValues(query));
    return row === undefined ? undefined : confirmationFromRow(row);
  }

  async transition(transition: ConfirmationTransition): Promise<ConfirmationRecord | undefined> {
    const values: unknown[] = [transition.to, transition.at, transition.tokenExpiresAt ?? null, transition.tenantId, transition.requestId];
    if (transition.activity !== undefined) values.push(...activityValues(transition.activity));
    const query = TRANSITION_STATEMENTS[`${transition.when}:${transition.activity !== undefined}`];
    const [row] = await this.#db.rows("could not decide a confirmation request", query, values);
    if (row === undefined) return undefined;
    const record = confirmationFromRow(row);
    this.#emit({ kind: "confirmation", tenantId: record.tenantId, requestId: record.requestId });
    return record;
  }

  /** Expired requests, oldest first; `limit` is already clamped to what PostgreSQL takes. */
  async expired(now: number, limit: number): Promise<readonly ConfirmationRecord[]> {
    const rows = await this.#db.rows("could not list expired confirmation requests", S.expiredConfirmations, [now, limit]);
    return rows.map(confirmationFromRow);
  }
}
