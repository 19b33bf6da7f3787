/** Chain rows to records and back, shared by the SQLite and PostgreSQL stores (see rows.ts for the conventions). */
import type { ActivityCheckpointRecord, ChainHead, ChainedActivityRecord, UnlinkedEvent } from "./activity-chain.js";
import { activityFromRow, num, str, type Row } from "./rows.js";

/**
 * The activity columns a chain link covers, in the order of the audit's CHAINED_FIELDS (tested to match):
 * what `readUnlinked` selects.
 */
export const CHAINED_COLUMNS = [
  "tenant_id",
  "id",
  "at",
  "kind",
  "actor_user_id",
  "caller_plugin_id",
  "provider_plugin_id",
  "tool",
  "version",
  "effect",
  "phase",
  "outcome",
  "error_code",
  "error_class",
  "operation_id",
  "confirmation_id",
  "target_id",
  "duration_ms",
  "correlation_id",
  "seam",
  "via",
  "authenticated_by",
  "confirmation",
  "confirmed_by",
  "manifest_version",
  "schema_hash",
  "policy_decision",
  "idempotency_key_hash",
  "grant_id",
] as const;

/** The select list of `readUnlinked`: the chained columns, then the event's own chain position (set only before migration 10). */
export const UNLINKED_SELECT = `${CHAINED_COLUMNS.join(", ")}, chain_seq`;

/** A `readUnlinked` row (values in UNLINKED_SELECT order) as the checkpointer takes it; undefined if the event has its own link. */
export function unlinkedFromValues(values: unknown[]): UnlinkedEvent | undefined {
  if (values.pop() !== null) return undefined;
  return { id: String(values[1]), values };
}

/** `readUnlinked` rows as the checkpointer takes them; undefined if any of the events has its own link. */
export function unlinkedFromRows(rows: readonly unknown[][]): UnlinkedEvent[] | undefined {
  const events: UnlinkedEvent[] = [];
  for (const row of rows) {
    const event = unlinkedFromValues(row);
    if (event === undefined) return undefined;
    events.push(event);
  }
  return events;
}

/** The checkpoint columns, in the order of `checkpointValues`. */
export const CHECKPOINT_COLUMNS = "tenant_id, seq, last_id, chain_hash, created_at, key_id, signature";

/** A checkpoint's values in the order of `CHECKPOINT_COLUMNS`. */
export function checkpointValues(checkpoint: ActivityCheckpointRecord): unknown[] {
  const { tenantId, seq, lastId, chainHash, createdAt, keyId, signature } = checkpoint;
  return [tenantId, seq, lastId, chainHash, createdAt, keyId, signature];
}

export function checkpointFromRow(row: Row): ActivityCheckpointRecord {
  return {
    tenantId: String(row.tenant_id),
    seq: Number(row.seq),
    lastId: String(row.last_id),
    chainHash: String(row.chain_hash),
    createdAt: Number(row.created_at),
    keyId: String(row.key_id),
    signature: String(row.signature),
  };
}

export function chainedActivityFromRow(row: Row): ChainedActivityRecord {
  const event = activityFromRow(row);
  const chainSeq = num(row.chain_seq);
  const chainHash = str(row.chain_hash);
  return chainSeq === undefined || chainHash === undefined ? event : { ...event, chainSeq, chainHash };
}

export function chainHeadFromRow(row: Row): ChainHead {
  return { seq: Number(row.seq), lastId: String(row.last_id) };
}
