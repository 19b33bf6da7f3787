/** Migrations run on a client of their own (no pool), with a longer statement limit than calls have. */
import { ignore, migrationClient } from "./connection.js";
import { unavailable } from "./errors.js";
import type { ClientBase } from "pg";
import { pendingMigrations } from "../schema-migration.js";
import { POSTGRES_MIGRATIONS, SCHEMA_NAME, type PostgresMigration } from "./migrations.js";
import { MIGRATION_QUERY_TIMEOUT_MS, resolveSettings, type PostgresSettings } from "./settings.js";

/**
 * Applies pending migrations to the database at `url` (in `schema` when given) and returns how many it
 * applied; `toolpact migrate` calls it. Safe while other instances start: each step is applied once.
 */
export async function migratePostgres(url: string, schema?: string): Promise<number> {
  return migrateWith(resolveSettings(schema === undefined ? { url } : { url, schema }));
}

/** Applies pending migrations with resolved settings (the store opening calls this before its pool starts). */
export async function migrateWith(settings: PostgresSettings): Promise<number> {
  const client = migrationClient(settings, MIGRATION_QUERY_TIMEOUT_MS);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(ignore);
    throw unavailable(settings, "could not connect to migrate", error);
  }
  try {
    return await applyPostgresMigrations(client, settings.schema);
  } catch (error) {
    if (error instanceof TypeError) throw error;
    throw unavailable(settings, "could not apply migrations", error);
  } finally {
    await client.end().catch(ignore);
  }
}

/**
 * Applies pending migrations in one transaction under a transaction-level advisory lock, so instances
 * starting together on one database apply each step once: the others wait for the lock, then find
 * nothing left to do. Creates `schema` first when one is given. Returns how many steps it applied.
 */
async function applyPostgresMigrations(
  client: ClientBase,
  schema: string | undefined,
  migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS,
): Promise<number> {
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new TypeError(`schema "${schema}" is not a plain lowercase identifier (${SCHEMA_NAME.source})`);
  }
  await client.query("BEGIN");
  try {
    // Migrations may take longer than a hot-path statement; the lock wait is bounded by the client's own timeouts.
    await client.query("SET LOCAL statement_timeout = 0");
    await client.query("SELECT pg_advisory_xact_lock($1::int, hashtext($2::text))", [MIGRATION_LOCK_CLASS, `toolpact.migrate:${schema ?? ""}`]);
    if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query("CREATE TABLE IF NOT EXISTS toolpact_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)");
    const row = (await client.query<{ version: number | null }>("SELECT MAX(version) AS version FROM toolpact_migrations")).rows[0];
    const pending = pendingMigrations(migrations, row?.version ?? 0);
    for (const step of pending) {
      await client.query(step.sql);
      await client.query("INSERT INTO toolpact_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [step.version, step.name, Date.now()]);
    }
    await client.query("COMMIT");
    return pending.length;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

/** The advisory lock class of migrations (an arbitrary constant: "tp" in ASCII). */
const MIGRATION_LOCK_CLASS = 0x7470;
