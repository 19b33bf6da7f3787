import { HostError, loadHostConfig, migrateDatabase } from "@toolpact/server";
import type { CliIo } from "../io.js";
import { parseCommandArgs } from "../command-args.js";

const HELP = `usage: toolpact migrate [--config toolpact.config.json] [--database <path or url>]

Applies pending schema migrations to the database named by --database, TOOLPACT_DATABASE_URL, or the
config's "database" (default ./.toolpact/toolpact.db): a SQLite file or a postgres:// URL (in the schema
"databaseOptions.schema" names, created if missing). Safe to run while servers start or while other
migrate commands run: each migration is applied once (PostgreSQL: under an advisory lock). Servers
also apply migrations at start-up.`;

/** `toolpact migrate`: 0 when the schema is current, 1 when the database cannot be migrated. */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs({ name: "migrate", help: HELP }, io, {
    args: [...args],
    options: {
      config: { type: "string", short: "c" },
      database: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (typeof parsed === "number") return parsed;
  const { values } = parsed;
  try {
    const config = await loadHostConfig({
      cwd: io.cwd,
      env: io.env,
      allowMissing: true,
      ...(values.config === undefined ? {} : { file: values.config }),
      ...(values.database === undefined ? {} : { database: values.database }),
    });
    const result = await migrateDatabase(config.database, config.databaseOptions);
    const applied = result.applied === undefined ? "" : ` (${result.applied} step${result.applied === 1 ? "" : "s"} applied now)`;
    io.stdout(`toolpact migrate: ${result.database} is at the latest schema${applied}`);
    return 0;
  } catch (error) {
    if (error instanceof HostError) {
      io.stderr(`toolpact migrate: ${error.message}`);
      for (const detail of error.details) io.stderr(`  ${detail}`);
    } else {
      io.stderr(`toolpact migrate: failed unexpectedly: ${(error as Error)?.stack ?? String(error)}`);
    }
    return 1;
  }
}
