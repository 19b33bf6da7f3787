import type Database from "better-sqlite3";
import type {
  ActivityChainStore,
  ActivityCheckpointRecord,
  ChainExtension,
  ChainHead,
  ChainRange,
  ChainedActivityRecord,
  UnlinkedEvent,
} from "../activity-chain.js";
import { withLinks, type PackedCheckpointLinks } from "../chain-links.js";
import {
  CHAIN_TENANTS_SQL,
  CHECKPOINT_COLUMNS,
  UNLINKED_SELECT,
  chainHeadFromRow,
  chainedActivityFromRow,
  checkpointFromRow,
  checkpointValues,
  unlinkedFromRows,
} from "../chain-rows.js";
import type { Row } from "../rows.js";
import type { WriteQueue } from "./write-queue.js";

/**
 * The activity chain on SQLite. Off the hot path, so statements are prepared once here rather than with
 * the store's; a checkpoint, its links and the head go through the write queue as one job (one transaction).
 */
export class SqliteActivityChain implements ActivityChainStore {
  readonly #queue: WriteQueue;
  readonly #s;

  constructor(db: Database.Database, queue: WriteQueue) {
    this.#queue = queue;
    this.#s = {
      tenants: db.prepare(CHAIN_TENANTS_SQL).pluck(),
      // Two statements rather than `(? IS NULL OR id < ?)`, which would keep SQLite from seeking the primary key.
      slice: db.prepare("SELECT * FROM activity WHERE tenant_id = ? AND id > ? ORDER BY id LIMIT ?"),
      sliceBefore: db.prepare("SELECT * FROM activity WHERE tenant_id = ? AND id > ? AND id < ? ORDER BY id LIMIT ?"),
      // The checkpointer's lean read: the chained columns as arrays (raw), not an object per row.
      unlinked: db.prepare(`SELECT ${UNLINKED_SELECT} FROM activity WHERE tenant_id = ? AND id > ? ORDER BY id LIMIT ?`).raw(true),
      unlinkedBefore: db.prepare(`SELECT ${UNLINKED_SELECT} FROM activity WHERE tenant_id = ? AND id > ? AND id < ? ORDER BY id LIMIT ?`).raw(true),
      linkedFrom: db.prepare("SELECT 1 FROM activity_checkpoints WHERE tenant_id = ? AND last_id >= ? LIMIT 1").pluck(),
      checkpoints: db.prepare(`SELECT ${CHECKPOINT_COLUMNS} FROM activity_checkpoints WHERE tenant_id = ? ORDER BY seq`),
      latest: db.prepare(`SELECT ${CHECKPOINT_COLUMNS} FROM activity_checkpoints WHERE tenant_id = ? ORDER BY seq DESC LIMIT 1`),
      covering: db.prepare("SELECT seq, last_id, links FROM activity_checkpoints WHERE tenant_id = ? AND last_id >= ? ORDER BY last_id"),
      head: db.prepare("SELECT seq, last_id FROM activity_chain_heads WHERE tenant_id = ?"),
      insertCheckpoint: db.prepare(`INSERT INTO activity_checkpoints (${CHECKPOINT_COLUMNS}, links) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
      moveHead: db.prepare(
        "INSERT INTO activity_chain_heads (tenant_id, seq, last_id) VALUES (?, ?, ?) ON CONFLICT (tenant_id) DO UPDATE SET seq = excluded.seq, last_id = excluded.last_id",
      ),
    };
  }

  listTenants(): Promise<readonly string[]> {
    return this.#queue.read(() => this.#s.tenants.all() as string[]);
  }

  readChain(tenantId: string, range: ChainRange): Promise<readonly ChainedActivityRecord[]> {
    const after = range.afterId ?? "";
    const limit = Math.max(1, Math.floor(range.limit));
    return this.#queue.read(() => {
      const events = (
        range.beforeId === undefined
          ? (this.#s.slice.all(tenantId, after, limit) as Row[])
          : (this.#s.sliceBefore.all(tenantId, after, range.beforeId, limit) as Row[])
      ).map(chainedActivityFromRow);
      if (events.length === 0) return events;
      const covering = this.#s.covering.iterate(tenantId, events[0]!.id) as IterableIterator<Row>;
      try {
        return withLinks(events, packedLinksOf(covering));
      } finally {
        covering.return?.();
      }
    });
  }

  readUnlinked(tenantId: string, range: ChainRange): Promise<readonly UnlinkedEvent[] | undefined> {
    const after = range.afterId ?? "";
    const limit = Math.max(1, Math.floor(range.limit));
    return this.#queue.read(() => {
      const rows = (
        range.beforeId === undefined ? this.#s.unlinked.all(tenantId, after, limit) : this.#s.unlinkedBefore.all(tenantId, after, range.beforeId, limit)
      ) as unknown[][];
      if (rows.length === 0) return [];
      // A checkpoint ending at or after the slice's first event may cover some of it: not passed.
      if (this.#s.linkedFrom.get(tenantId, rows[0]![1]) !== undefined) return undefined;
      return unlinkedFromRows(rows);
    });
  }

  chainHead(tenantId: string): Promise<ChainHead | undefined> {
    return this.#queue.read(() => {
      const row = this.#s.head.get(tenantId) as Row | undefined;
      return row === undefined ? undefined : chainHeadFromRow(row);
    });
  }

  listCheckpoints(tenantId: string): Promise<readonly ActivityCheckpointRecord[]> {
    return this.#queue.read(() => (this.#s.checkpoints.all(tenantId) as Row[]).map(checkpointFromRow));
  }

  latestCheckpoint(tenantId: string): Promise<ActivityCheckpointRecord | undefined> {
    return this.#queue.read(() => {
      const row = this.#s.latest.get(tenantId) as Row | undefined;
      return row === undefined ? undefined : checkpointFromRow(row);
    });
  }

  extendChain(extension: ChainExtension): Promise<boolean> {
    const { tenantId, afterSeq, packedLinks, checkpoint } = extension;
    return this.#queue.write(() => {
      // Checked before anything is written, so a chain that moved leaves the shared transaction untouched.
      const latest = this.#s.latest.get(tenantId) as Row | undefined;
      if ((latest === undefined ? 0 : Number(latest.seq)) !== afterSeq) return false;
      this.#s.insertCheckpoint.run(...checkpointValues(checkpoint), packedLinks);
      this.#s.moveHead.run(tenantId, checkpoint.seq, checkpoint.lastId);
      return true;
    });
  }
}

function* packedLinksOf(rows: Iterable<Row>): Generator<PackedCheckpointLinks> {
  for (const row of rows) yield { seq: Number(row.seq), lastId: String(row.last_id), links: (row.links as Uint8Array | null) ?? null };
}
