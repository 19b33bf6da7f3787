/** Chain rows to records and back, shared by the SQLite and PostgreSQL stores (see rows.ts for the conventions). */
import type { ActivityCheckpointRecord, ChainHead, ChainedActivityRecord } from "./activity-chain.js";
import { activityFromRow, num, str, type Row } from "./rows.js";

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
