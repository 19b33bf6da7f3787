import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { nativeBindingProblem, storeUnavailable } from "./errors.js";
import { SQLITE_MIGRATIONS, migrate } from "./migrations.js";

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

/**
 * Opens the database (creating its folder), in WAL with `synchronous=NORMAL` (survives a process crash,
 * not a power cut), and applies pending migrations.
 * @throws ToolpactError STORE_UNAVAILABLE saying what failed: a missing native binding says so and how to build it.
 */
export function openSqlite(settings: SqliteSettings): Database.Database {
  const { path } = settings;
  if (path !== ":memory:" && !path.startsWith("file:")) {
    mkdirSync(dirname(path), { recursive: true });
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(path, {
      timeout: settings.busyTimeoutMs,
      ...(settings.nativeBinding === undefined ? {} : { nativeBinding: settings.nativeBinding }),
    });
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(settings.busyTimeoutMs))}`);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = OFF");
    migrate(db, SQLITE_MIGRATIONS);
    return db;
  } catch (error) {
    db?.close();
    throw nativeBindingProblem(error) ?? storeUnavailable(`could not open the SQLite database at ${path}`, error);
  }
}
