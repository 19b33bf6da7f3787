import type Database from "better-sqlite3";
import type { ActivityChainStore, ActivityCheckpointRecord, ChainExtension, ChainRange, ChainedActivityRecord } from "../activity-chain.js";
import { CHECKPOINT_COLUMNS, chainedActivityFromRow, checkpointFromRow, checkpointValues } from "../chain-rows.js";
import type { Row } from "../rows.js";
import type { WriteQueue } from "./write-queue.js";

/**
 * The activity chain on SQLite. Off the hot path, so statements are prepared once here rather than with
 * the store's; the links and their checkpoint go through the write queue as one job (one transaction).
 */
export class SqliteActivityChain implements ActivityChainStore {
  readonly #queue: WriteQueue;
  readonly #s;

  constructor(db: Database.Database, queue: WriteQueue) {
    this.#queue = queue;
    this.#s = {
      tenants: db.prepare("SELECT tenant_id FROM activity UNION SELECT tenant_id FROM activity_checkpoints ORDER BY 1").pluck(),
      // Two statements rather than `(? IS NULL OR id < ?)`, which would keep SQLite from seeking the primary key.
      slice: db.prepare("SELECT * FROM activity WHERE tenant_id = ? AND id > ? ORDER BY id LIMIT ?"),
      sliceBefore: db.prepare("SELECT * FROM activity WHERE tenant_id = ? AND id > ? AND id < ? ORDER BY id LIMIT ?"),
      checkpoints: db.prepare("SELECT * FROM activity_checkpoints WHERE tenant_id = ? ORDER BY seq"),
      latest: db.prepare("SELECT * FROM activity_checkpoints WHERE tenant_id = ? ORDER BY seq DESC LIMIT 1"),
      unlinked: db.prepare("SELECT chain_seq IS NULL AS unlinked FROM activity WHERE tenant_id = ? AND id = ?").pluck(),
      link: db.prepare("UPDATE activity SET chain_seq = ?, chain_hash = ? WHERE tenant_id = ? AND id = ? AND chain_seq IS NULL"),
      insertCheckpoint: db.prepare(`INSERT INTO activity_checkpoints (${CHECKPOINT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`),
    };
  }

  listTenants(): Promise<readonly string[]> {
    return this.#queue.read(() => this.#s.tenants.all() as string[]);
  }

  readChain(tenantId: string, range: ChainRange): Promise<readonly ChainedActivityRecord[]> {
    const after = range.afterId ?? "";
    const limit = Math.max(1, Math.floor(range.limit));
    return this.#queue.read(() =>
      (range.beforeId === undefined
        ? (this.#s.slice.all(tenantId, after, limit) as Row[])
        : (this.#s.sliceBefore.all(tenantId, after, range.beforeId, limit) as Row[])
      ).map(chainedActivityFromRow),
    );
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
    const { tenantId, afterSeq, links, checkpoint } = extension;
    return this.#queue.write(() => {
      // Checked before anything is written, so a chain that moved leaves the shared transaction untouched.
      const latest = this.#s.latest.get(tenantId) as Row | undefined;
      if ((latest === undefined ? 0 : Number(latest.seq)) !== afterSeq) return false;
      if (!links.every((link) => this.#s.unlinked.get(tenantId, link.id) === 1)) return false;
      for (const link of links) this.#s.link.run(link.seq, link.hash, tenantId, link.id);
      this.#s.insertCheckpoint.run(...checkpointValues(checkpoint));
      return true;
    });
  }
}
