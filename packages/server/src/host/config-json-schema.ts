import { z } from "zod";
import { configSchema } from "./config.js";

/** The `$id` of toolpact.config.schema.json: a name, not a location (editors get the file from the package). */
export const CONFIG_SCHEMA_ID = "urn:toolpact:schema:host-config";

/**
 * The editor-facing JSON Schema (2020-12) of `toolpact.config.json`, generated from the zod schema the
 * config loader parses with, so both accept and refuse the same fields. Rules zod states in code (a
 * pruning interval of 0 or at least 100 ms, PostgreSQL settings only with a postgres:// URL) stay the
 * loader's. Written to `toolpact.config.schema.json` by `pnpm --filter @toolpact/server config-schema`.
 */
export function hostConfigJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(configSchema, { target: "draft-2020-12", io: "input", unrepresentable: "throw" }) as Record<string, unknown>;
  return {
    $schema: schema["$schema"],
    $id: CONFIG_SCHEMA_ID,
    title: "toolpact host configuration (toolpact.config.json)",
    description: "What `toolpact serve` reads: plugin folders, the database, the address, limits, retention and (better kept in the environment) secrets.",
    ...Object.fromEntries(Object.entries(schema).filter(([key]) => key !== "$schema")),
  };
}
