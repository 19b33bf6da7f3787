import { z } from "zod";
import { manifestSchema, toolNameSchema } from "./manifest.js";
import { RESERVED_TOOL_NAMES } from "./names.js";
import { toolSchemaDefs } from "./tool-schema-meta.js";

/** The `$id` of manifest.schema.json: a name, not a location (editors get the file from the package). */
export const MANIFEST_SCHEMA_ID = "urn:toolpact:schema:plugin-manifest";

/**
 * The editor-facing JSON Schema (2020-12) of `plugin.json`, generated from the zod manifest schema; it
 * accepts and rejects what the zod schema does, and applies the JSON Schema meta-schema (2020-12, or
 * draft-07 when a tool schema's `$schema` says so), bundled in `$defs`, to `inputSchema` and
 * `outputSchema`, so an editor underlines a `"requird"` typo there too. Cross-field rules (uniqueness,
 * permissions) and the evaluator's refusals (`$id`, `$ref` cycles, patterns) are the loader's.
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
  const tool = (schema["properties"] as Record<string, { items?: { properties?: Record<string, Record<string, unknown>> } }>)["tools"]?.items?.properties;
  if (!tool?.["inputSchema"] || !tool["outputSchema"]) throw new Error("the manifest's zod schema no longer has tools[].inputSchema and outputSchema");
  for (const key of ["inputSchema", "outputSchema"]) tool[key] = { description: tool[key]!["description"], $ref: "#/$defs/toolSchema" };
  return {
    $schema: schema["$schema"],
    $id: MANIFEST_SCHEMA_ID,
    title: "toolpact plugin manifest (plugin.json)",
    ...Object.fromEntries(Object.entries(schema).filter(([key]) => key !== "$schema")),
    $defs: { ...(schema["$defs"] as Record<string, unknown> | undefined), ...toolSchemaDefs() },
  };
}
