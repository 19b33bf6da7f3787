/** Migrations run on a client of their own (no pool), with a longer statement limit than calls have. */
import { ignore, migrationClient } from "./connection.js";
import { unavailable } from "./errors.js";
import { applyPostgresMigrations } from "./migrations.js";
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
