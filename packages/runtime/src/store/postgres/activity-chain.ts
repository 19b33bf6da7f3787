import type { ActivityChainStore, ActivityCheckpointRecord, ChainExtension, ChainRange, ChainedActivityRecord } from "../activity-chain.js";
import { CHECKPOINT_COLUMNS, chainedActivityFromRow, checkpointFromRow, checkpointValues } from "../chain-rows.js";
import { PostgresConnection } from "./connection.js";
import { statement } from "./statements.js";

/** The advisory lock class of chain writers ("ta" in ASCII): one checkpointer per tenant at a time, across instances. */
const CHAIN_LOCK_CLASS = 0x7461;

const S = {
  tenants: statement("chain_tenants", "SELECT tenant_id FROM activity UNION SELECT tenant_id FROM activity_checkpoints ORDER BY 1"),
  slice: statement(
    "chain_slice",
    "SELECT * FROM activity WHERE tenant_id = $1::text AND id > $2::text AND id < COALESCE($3::text, id || 'x') ORDER BY id LIMIT $4::int8",
  ),
  checkpoints: statement("chain_checkpoints", "SELECT * FROM activity_checkpoints WHERE tenant_id = $1::text ORDER BY seq"),
  latest: statement("chain_latest", "SELECT * FROM activity_checkpoints WHERE tenant_id = $1::text ORDER BY seq DESC LIMIT 1"),
  lock: statement("chain_lock", `SELECT pg_advisory_xact_lock(${CHAIN_LOCK_CLASS}, hashtext($1::text))`),
  head: statement("chain_head", "SELECT COALESCE(MAX(seq), 0) AS seq FROM activity_checkpoints WHERE tenant_id = $1::text"),
  link: statement(
    "chain_link",
    `UPDATE activity AS a SET chain_seq = l.seq, chain_hash = l.hash
     FROM unnest($2::text[], $3::int8[], $4::text[]) AS l(id, seq, hash)
     WHERE a.tenant_id = $1::text AND a.id = l.id AND a.chain_seq IS NULL`,
  ),
  insertCheckpoint: statement(
    "chain_insert_checkpoint",
    `INSERT INTO activity_checkpoints (${CHECKPOINT_COLUMNS}) VALUES ($1::text, $2::int8, $3::text, $4::text, $5::int8, $6::text, $7::text)`,
  ),
  abandon: statement("chain_abandon", "SELECT toolpact_refuse('an event to link was changed or removed meanwhile')"),
};

/**
 * The activity chain on PostgreSQL. Chain writers of one tenant take a transaction-level advisory lock,
 * so instances never link the same events twice; calls' own inserts take no lock and wait for nothing.
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
    return (await this.#db.rows("could not read the activity chain", S.slice, values)).map(chainedActivityFromRow);
  }

  async listCheckpoints(tenantId: string): Promise<readonly ActivityCheckpointRecord[]> {
    return (await this.#db.rows("could not read the activity checkpoints", S.checkpoints, [tenantId])).map(checkpointFromRow);
  }

  async latestCheckpoint(tenantId: string): Promise<ActivityCheckpointRecord | undefined> {
    const [row] = await this.#db.rows("could not read the latest activity checkpoint", S.latest, [tenantId]);
    return row === undefined ? undefined : checkpointFromRow(row);
  }

  extendChain(extension: ChainExtension): Promise<boolean> {
    const { tenantId, afterSeq, links, checkpoint } = extension;
    return this.#db.transaction("could not extend the activity chain", async (client) => {
      await PostgresConnection.run(client, S.lock, [tenantId]);
      const head = (await PostgresConnection.run(client, S.head, [tenantId])).rows[0];
      if (Number(head?.seq ?? 0) !== afterSeq) return false;
      const linked = await PostgresConnection.run(client, S.link, [
        tenantId,
        links.map((link) => link.id),
        links.map((link) => link.seq),
        links.map((link) => link.hash),
      ]);
      // Rolls the whole transaction back: a checkpoint never covers events it did not link.
      if ((linked.rowCount ?? 0) !== links.length) await PostgresConnection.run(client, S.abandon, []);
      await PostgresConnection.run(client, S.insertCheckpoint, checkpointValues(checkpoint));
      return true;
    });
  }
}
