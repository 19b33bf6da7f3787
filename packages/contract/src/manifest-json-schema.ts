import { z } from "zod";
import { manifestSchema, toolNameSchema } from "./manifest.js";
import { RESERVED_TOOL_NAMES } from "./names.js";

/**
 * The editor-facing JSON Schema (2020-12) of `plugin.json`, generated from the zod manifest schema; it
 * accepts and rejects what the zod schema does. Cross-field rules (uniqueness, permissions) and the tool
 * schemas' meta-schema checks are the loader's: JSON Schema cannot say them.
 * Written to `manifest.schema.json` by `pnpm --filter @toolpact/contract manifest-schema`.
 */
export function manifestJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(manifestSchema, {
    target: "draft-2020-12",
    io: "input",
    unrepresentable: "throw",
    override: (context) => {
      // zod's refinement is code; JSON Schema says the same thing with `not`.
      if (context.zodSchema === toolNameSchema) {
        context.jsonSchema.not = { enum: [...RESERVED_TOOL_NAMES].sort() };
      }
    },
  }) as Record<string, unknown>;
  return {
    $schema: schema["$schema"],
    title: "toolpact plugin manifest (plugin.json)",
    ...Object.fromEntries(Object.entries(schema).filter(([key]) => key !== "$schema")),
  };
}
