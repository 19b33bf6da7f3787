import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { nativeBindingProblem, storeUnavailable } from "./errors.js";
import { SQLITE_MIGRATIONS, migrate } from "./migrations.js";
import type { SqliteSettings } from "./settings.js";

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
