/** One schema step; applied in order, each at most once, recorded in the database's migrations table. */
export interface SchemaMigration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/**
 * The steps a database at schema version `current` still needs, in version order. Throws when the
 * database is newer than every step this toolpact knows.
 */
export function pendingMigrations(migrations: readonly SchemaMigration[], current: number): SchemaMigration[] {
  const latest = migrations.reduce((max, step) => Math.max(max, step.version), 0);
  if (current > latest) {
    throw new Error(`the database schema is at version ${current}, newer than this toolpact knows (${latest}): upgrade toolpact`);
  }
  return migrations.filter((step) => step.version > current).sort((a, b) => a.version - b.version);
}
