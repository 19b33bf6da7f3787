import type {
  ActivityChainStore,
  ActivityCheckpointRecord,
  ChainExtension,
  ChainHead,
  ChainRange,
  ChainedActivityRecord,
  UnlinkedEvent,
} from "../activity-chain.js";
import { withLinks } from "../chain-links.js";
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
import { PostgresConnection } from "./connection.js";
import { statement } from "./statements.js";

/** The advisory lock class of chain writers ("ta" in ASCII): one checkpointer per tenant at a time, across instances. */
const CHAIN_LOCK_CLASS = 0x7461;

const S = {
  tenants: statement("chain_tenants", CHAIN_TENANTS_SQL),
  slice: statement(
    "chain_slice",
    "SELECT * FROM activity WHERE tenant_id = $1::text AND id > $2::text AND id < COALESCE($3::text, id || 'x') ORDER BY id LIMIT $4::int8",
  ),
  // The checkpointer's lean read: the chained columns as arrays, not an object per row.
  unlinked: statement(
    "chain_unlinked",
    `SELECT ${UNLINKED_SELECT} FROM activity WHERE tenant_id = $1::text AND id > $2::text AND id < COALESCE($3::text, id || 'x') ORDER BY id LIMIT $4::int8`,
    "array",
  ),
  linkedFrom: statement("chain_linked_from", "SELECT 1 FROM activity_checkpoints WHERE tenant_id = $1::text AND last_id >= $2::text LIMIT 1"),
  checkpoints: statement("chain_checkpoints", `SELECT ${CHECKPOINT_COLUMNS} FROM activity_checkpoints WHERE tenant_id = $1::text ORDER BY seq`),
  latest: statement("chain_latest", `SELECT ${CHECKPOINT_COLUMNS} FROM activity_checkpoints WHERE tenant_id = $1::text ORDER BY seq DESC LIMIT 1`),
  lock: statement("chain_lock", `SELECT pg_advisory_xact_lock(${CHAIN_LOCK_CLASS}, hashtext($1::text))`),
  head: statement("chain_head", "SELECT COALESCE(MAX(seq), 0) AS seq FROM activity_checkpoints WHERE tenant_id = $1::text"),
  // The checkpoints covering a page of events: from the first whose last event is at or after the page's
  // first, as many as the page has events (each checkpoint covers one at least) and one more.
  covering: statement(
    "chain_covering",
    "SELECT seq, last_id, links FROM activity_checkpoints WHERE tenant_id = $1::text AND last_id >= $2::text ORDER BY last_id LIMIT $3::int8",
  ),
  chainHead: statement("chain_head_of", "SELECT seq, last_id FROM activity_chain_heads WHERE tenant_id = $1::text"),
  insertCheckpoint: statement(
    "chain_insert_checkpoint",
    `INSERT INTO activity_checkpoints (${CHECKPOINT_COLUMNS}, links) VALUES ($1::text, $2::int8, $3::text, $4::text, $5::int8, $6::text, $7::text, $8::bytea)`,
  ),
  moveHead: statement(
    "chain_move_head",
    `INSERT INTO activity_chain_heads (tenant_id, seq, last_id) VALUES ($1::text, $2::int8, $3::text)
     ON CONFLICT (tenant_id) DO UPDATE SET seq = excluded.seq, last_id = excluded.last_id`,
  ),
};

/**
 * The activity chain on PostgreSQL. Chain writers of one tenant take a transaction-level advisory lock,
 * so instances never checkpoint the same events twice; calls' own inserts take no lock and wait for nothing.
 */
export class PostgresActivityChain implements ActivityChainStore {
  readonly #db: PostgresConnection;

  constructor(db: PostgresConnection) {
    this.#db = db;
  }

  async listTenants(): Promise<readonly string[]> {
    return (await this.#db.rows("could not list the tenants with activity", S.tenants, [])).map((row) => String(row.tenant_id));
  }

  async readChain(tenantId: string, range: ChainRange): Promise<readonly ChainedActivityRecord[]> {
    const values = [tenantId, range.afterId ?? "", range.beforeId ?? null, Math.max(1, Math.floor(range.limit))];
    const events = (await this.#db.rows("could not read the activity chain", S.slice, values)).map(chainedActivityFromRow);
    if (events.length === 0) return events;
    const covering = await this.#db.rows("could not read the activity chain", S.covering, [tenantId, events[0]!.id, events.length + 1]);
    return withLinks(
      events,
      covering.map((row) => ({ seq: Number(row.seq), lastId: String(row.last_id), links: (row.links as Uint8Array | null) ?? null })),
    );
  }

  async readUnlinked(tenantId: string, range: ChainRange): Promise<readonly UnlinkedEvent[] | undefined> {
    const values = [tenantId, range.afterId ?? "", range.beforeId ?? null, Math.max(1, Math.floor(range.limit))];
    const rows = (await this.#db.rows("could not read the activity chain", S.unlinked, values)) as unknown as unknown[][];
    if (rows.length === 0) return [];
    // A checkpoint ending at or after the slice's first event may cover some of it: not passed.
    if ((await this.#db.rows("could not read the activity chain", S.linkedFrom, [tenantId, rows[0]![1]])).length > 0) return undefined;
    return unlinkedFromRows(rows);
  }

  async chainHead(tenantId: string): Promise<ChainHead | undefined> {
    const [row] = await this.#db.rows("could not read the activity chain's head", S.chainHead, [tenantId]);
    return row === undefined ? undefined : chainHeadFromRow(row);
  }

  async listCheckpoints(tenantId: string): Promise<readonly ActivityCheckpointRecord[]> {
    return (await this.#db.rows("could not read the activity checkpoints", S.checkpoints, [tenantId])).map(checkpointFromRow);
  }

  async latestCheckpoint(tenantId: string): Promise<ActivityCheckpointRecord | undefined> {
    const [row] = await this.#db.rows("could not read the latest activity checkpoint", S.latest, [tenantId]);
    return row === undefined ? undefined : checkpointFromRow(row);
  }

  extendChain(extension: ChainExtension): Promise<boolean> {
    const { tenantId, afterSeq, packedLinks, checkpoint } = extension;
    return this.#db.transaction("could not extend the activity chain", async (client) => {
      await PostgresConnection.run(client, S.lock, [tenantId]);
      const head = (await PostgresConnection.run(client, S.head, [tenantId])).rows[0];
      if (Number(head?.seq ?? 0) !== afterSeq) return false;
      await PostgresConnection.run(client, S.insertCheckpoint, [...checkpointValues(checkpoint), packedLinks]);
      await PostgresConnection.run(client, S.moveHead, [tenantId, checkpoint.seq, checkpoint.lastId]);
      return true;
    });
  }
}
