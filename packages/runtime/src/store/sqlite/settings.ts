/** Options of `createSqliteStore`. */
export interface SqliteStoreOptions {
  /** A file path (its folder is created) or `":memory:"`. */
  readonly path: string;
  /** How long a write waits for another process's lock, in ms (default 5000). */
  readonly busyTimeoutMs?: number;
  /**
   * Group commit: writes requested in the same event-loop turn share one transaction. Each write stays
   * all-or-nothing: when one fails, the batch is redone with each write in its own savepoint, so one
   * failing write does not undo another. Default true; false commits each write alone.
   */
  readonly groupCommit?: boolean;
  /**
   * Where WAL checkpoints run: "background" (default) copies the WAL into the database from a worker
   * thread with its own connection, so the event loop never waits for it; "inline" leaves SQLite's
   * automatic checkpoint on the writing connection.
   */
  readonly checkpoint?: "background" | "inline";
  /** How often the background checkpoint runs, in ms (default 250). */
  readonly checkpointIntervalMs?: number;
  /**
   * The path of better-sqlite3's compiled `better_sqlite3.node`, when it is not where the driver looks
   * (a bundled application ships it elsewhere). Default: the driver finds its own.
   */
  readonly nativeBinding?: string;
}

/** The options with every default filled in. */
export interface SqliteSettings {
  readonly path: string;
  readonly busyTimeoutMs: number;
  readonly groupCommit: boolean;
  readonly checkpoint: "background" | "inline";
  readonly checkpointIntervalMs: number;
  readonly nativeBinding: string | undefined;
}

/** Fills in the defaults of `createSqliteStore`'s options. */
export function resolveSqliteSettings(options: SqliteStoreOptions): SqliteSettings {
  return {
    path: options.path,
    busyTimeoutMs: options.busyTimeoutMs ?? 5000,
    groupCommit: options.groupCommit ?? true,
    checkpoint: options.checkpoint ?? "background",
    checkpointIntervalMs: options.checkpointIntervalMs ?? 250,
    nativeBinding: options.nativeBinding,
  };
}
