/**
 * The activity chain alone, on a connection of its own to a store's location: what the audit
 * checkpoint's worker thread opens to read from, so reading events, linking and signing never take the
 * calls' thread or connections. The worker never writes through it (see `checkpoint-worker.ts`).
 */
import type { ActivityChainStore } from "./activity-chain.js";
import { PostgresActivityChain } from "./postgres/activity-chain.js";
import { PostgresConnection } from "./postgres/connection.js";
import { resolveSettings } from "./postgres/settings.js";
import { SqliteActivityChain } from "./sqlite/activity-chain.js";
import { openSqlite } from "./sqlite/open-database.js";
import { resolveSqliteSettings } from "./sqlite/settings.js";
import { WriteQueue } from "./sqlite/write-queue.js";
import type { StoreLocation } from "./store-location.js";

/** An activity chain and how to close its connection. */
export interface OpenedActivityChain {
  readonly chain: ActivityChainStore;
  close(): Promise<void>;
}

/** Opens the chain of the store at `location` (its schema is the store's: already migrated). */
export function openActivityChain(location: StoreLocation): OpenedActivityChain {
  if (location.kind === "sqlite") {
    const { kind: _kind, ...options } = location;
    const db = openSqlite(resolveSqliteSettings({ ...options, checkpoint: "inline" }));
    const queue = new WriteQueue(db, false);
    return {
      chain: new SqliteActivityChain(db, queue),
      close: async () => {
        queue.close();
        db.close();
      },
    };
  }
  const { kind: _kind, ...options } = location;
  // One connection: the chain's statements run one after another.
  const connection = new PostgresConnection(resolveSettings({ ...options, poolSize: 1 }));
  return { chain: new PostgresActivityChain(connection), close: () => connection.close() };
}
