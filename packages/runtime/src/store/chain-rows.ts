/** Chain rows to records and back, shared by the SQLite and PostgreSQL stores (see rows.ts for the conventions). */
import type { ActivityCheckpointRecord, ChainHead, ChainedActivityRecord, UnlinkedEvent } from "./activity-chain.js";
import { CHAINED_FIELDS } from "../audit/chain-hash.js";
import { activityFromRow, num, str, type Row } from "./rows.js";

/** The activity columns a chain link covers: the audit's CHAINED_FIELDS as their columns are named, in that order. */
export const CHAINED_COLUMNS: readonly string[] = CHAINED_FIELDS.map((field) => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`));

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

/** The distinct tenants of one table whose primary key leads with tenant_id: one index seek per tenant (a loose index scan), not a scan of every row. */
function distinctTenants(table: string, name: string): string {
  return `${name}(t) AS (
    SELECT MIN(tenant_id) FROM ${table}
    UNION ALL
    SELECT (SELECT tenant_id FROM ${table} WHERE tenant_id > ${name}.t ORDER BY tenant_id LIMIT 1) FROM ${name} WHERE ${name}.t IS NOT NULL
  )`;
}

/**
 * Every tenant with activity or checkpoints, in order; the same SQL on SQLite and PostgreSQL. The checkpoint
 * job asks for it on every run: a plain `SELECT DISTINCT` would read the whole activity log each time.
 */
export const CHAIN_TENANTS_SQL = `WITH RECURSIVE ${distinctTenants("activity", "a")}, ${distinctTenants("activity_checkpoints", "c")}
  SELECT t AS tenant_id FROM a WHERE t IS NOT NULL UNION SELECT t FROM c WHERE t IS NOT NULL ORDER BY 1`;

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
