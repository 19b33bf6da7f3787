import { createPostgresStore } from "./postgres/postgres-store.js";
import type { PostgresStoreOptions } from "./postgres/settings.js";
import { createSqliteStore } from "./sqlite/sqlite-store.js";
import type { SqliteStoreOptions } from "./sqlite/settings.js";
import type { Store } from "./store.js";

/** Per-kind options of `createStore`; only the ones of the kind `database` selects are used. */
export interface CreateStoreOptions {
  readonly sqlite?: Omit<SqliteStoreOptions, "path">;
  readonly postgres?: Omit<PostgresStoreOptions, "url">;
}

/**
 * Opens the store a `database` setting names: a `postgres://` or `postgresql://` URL selects PostgreSQL,
 * anything else is a SQLite file path (or `":memory:"`, or a `file:` URI). Migrations are applied on open.
 * @example const store = await createStore(process.env.TOOLPACT_DATABASE_URL ?? "./.toolpact/toolpact.db");
 */
export async function createStore(database: string, options: CreateStoreOptions = {}): Promise<Store> {
  if (database.trim() === "") {
    throw new TypeError("the database setting is empty: give a SQLite file path or a postgres:// URL");
  }
  if (isPostgresUrl(database)) return createPostgresStore({ ...options.postgres, url: database });
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(database)?.[1];
  if (scheme !== undefined && scheme.toLowerCase() !== "file") {
    throw new TypeError(`database "${scheme}://..." is not supported: use a postgres:// or postgresql:// URL, or a SQLite file path`);
  }
  return createSqliteStore({ ...options.sqlite, path: database });
}

/** True when a `database` setting selects PostgreSQL. */
export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database);
}
