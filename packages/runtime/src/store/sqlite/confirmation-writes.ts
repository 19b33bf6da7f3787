/**
 * Platform-mode confirmation requests' writes on SQLite, each run inside one transaction of the write
 * queue: the pending-limit check with the insert, and a pending request's one transition.
 */
import { confirmationFromRow, confirmationValues, type Row } from "../rows.js";
import type { ConfirmationCreateResult, ConfirmationRecord, ConfirmationTransition } from "../store.js";
import { insertActivity } from "./ledger-writes.js";
import type { SqliteStatements } from "./statements.js";

/** Inserts the request unless its (tenant, caller, actor) already has `maxPending` pending ones. */
export function createConfirmation(s: SqliteStatements, record: ConfirmationRecord, maxPending: number): ConfirmationCreateResult {
  const owner = [record.tenantId, record.callerPluginId, record.actorUserId, record.createdAt] as const;
  const pending = Number(s.countPending.get(...owner));
  if (pending >= maxPending) return { status: "rate-limited", retryAt: Number(s.oldestPending.get(...owner)) };
  s.insertConfirmation.run(...confirmationValues(record));
  return { status: "created" };
}

/** Moves a pending request (live, or already expired for `expired`) and logs its activity; undefined when it was not pending. */
export function transitionConfirmation(s: SqliteStatements, transition: ConfirmationTransition): ConfirmationRecord | undefined {
  const statement = transition.when === "live" ? s.transitionLive : s.transitionExpired;
  const { to, at, tenantId, requestId } = transition;
  const changes = statement.run(to, at, transition.tokenExpiresAt ?? null, tenantId, requestId, at).changes;
  if (changes === 0) return undefined;
  if (transition.activity !== undefined) insertActivity(s, transition.activity);
  return confirmationFromRow(s.getConfirmation.get(tenantId, requestId) as Row);
}
