import { withoutUndefined } from "@toolpact/contract";
import { createStore, isPostgresUrl, migratePostgres, type Store } from "@toolpact/runtime";
import type { Logger } from "../logger.js";
import type { DatabaseOptions, HostConfig } from "./config.js";
import { HostError } from "./host-error.js";

/** What `migrateDatabase` did. */
export interface MigrationResult {
  /** The database, for people (no password): see `describeDatabase`. */
  readonly database: string;
  /** Steps applied now (PostgreSQL); undefined for SQLite, which reports no count. */
  readonly applied: number | undefined;
}

/**
 * Applies pending schema migrations to a database (`toolpact migrate`). Safe while other hosts start on
 * the same database: SQLite applies each step once in an immediate transaction, PostgreSQL under an
 * advisory lock.
 */
export async function migrateDatabase(database: string, options: DatabaseOptions = {}): Promise<MigrationResult> {
  const described = describeDatabase(database, options);
  if (isPostgresUrl(database)) {
    const applied = await migratePostgres(database, options.schema).catch((error: unknown) => {
      throw new HostError(`${described} could not be migrated: ${(error as Error).message}`, [], { cause: error });
    });
    return { database: described, applied };
  }
  const store = await openStore({ database, databaseOptions: {} }, {});
  await store.close();
  return { database: described, applied: undefined };
}

/** A database setting for people: `SQLite <path>`, or `PostgreSQL postgres://user@host:port/db (schema s)` without password or parameters. */
export function describeDatabase(database: string, options: DatabaseOptions = {}): string {
  if (!isPostgresUrl(database)) return `SQLite ${database}`;
  let shown: string;
  try {
    const url = new URL(database);
    shown = `${url.protocol}//${url.username === "" ? "" : `${url.username}@`}${url.host}${url.pathname}`;
  } catch {
    shown = "(an unparsable postgres:// URL)";
  }
  return `PostgreSQL ${shown}${options.schema === undefined ? "" : ` (schema ${options.schema})`}`;
}

/**
 * Opens (and migrates) the store `database` names; PostgreSQL gets `databaseOptions`, the instance id and
 * the logger (the details of a failed call go there; callers get a generic message).
 */
export async function openStore(
  config: Pick<HostConfig, "database" | "databaseOptions">,
  extra: { readonly instanceId?: string; readonly logger?: Logger },
): Promise<Store> {
  try {
    return await createStore(config.database, {
      postgres: { ...config.databaseOptions, ...withoutUndefined({ instanceId: extra.instanceId, logger: extra.logger }) },
    });
  } catch (error) {
    throw new HostError(`the database (${describeDatabase(config.database, config.databaseOptions)}) could not be opened: ${(error as Error).message}`, [], {
      cause: error,
    });
  }
}
