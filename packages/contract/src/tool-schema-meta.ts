/**
 * The JSON Schema meta-schemas (2020-12 and draft-07) as plain `$defs` of one document, for the manifest's
 * editor-facing schema: no `$id`, no `$dynamicRef`, no network, only `#/$defs/...` references, which every
 * editor resolves. Stricter than the originals in one way, as the loader is: a keyword that is not JSON
 * Schema's (a `requird` typo) is flagged unless it starts with `x-`.
 */
import { createRequire } from "node:module";

type Json = Record<string, unknown>;

const require = createRequire(import.meta.url);
const VOCABULARIES_2020 = ["core", "applicator", "unevaluated", "validation", "meta-data", "format-annotation", "content"];

/** The `$defs` name of each dialect's meta-schema. */
export const META_SCHEMA_DEFS = { "2020-12": "jsonSchema2020", "draft-07": "jsonSchemaDraft07" } as const;

/** Rewrites every `$ref` / `$dynamicRef` of a meta-schema part with `rename`, dropping identifiers. */
function rewrite(value: unknown, rename: (ref: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => rewrite(item, rename));
  if (typeof value !== "object" || value === null) return value;
  const out: Json = {};
  for (const [key, child] of Object.entries(value)) {
    if ((key === "$dynamicRef" || key === "$ref") && typeof child === "string") out["$ref"] = rename(child);
    else out[key] = rewrite(child, rename);
  }
  return out;
}

/** Closed over JSON Schema's keywords, with `x-` extensions allowed. */
function closed(properties: Json, name: string, description: string): Json {
  return { $comment: name, description, type: ["object", "boolean"], properties, patternProperties: { "^x-": true }, additionalProperties: false };
}

function meta2020(): Json {
  const defs: Json = {};
  const properties: Json = {};
  const self = `#/$defs/${META_SCHEMA_DEFS["2020-12"]}`;
  const rename = (ref: string): string => {
    if (ref === "#meta") return self;
    const local = /(?:^|#)\/\$defs\/(.+)$/.exec(ref);
    if (!local) throw new Error(`unexpected reference ${ref} in the 2020-12 meta-schema`);
    return `${self}-${local[1]}`;
  };
  const parts = [
    ...VOCABULARIES_2020.map((name) => require(`ajv/dist/refs/json-schema-2020-12/meta/${name}.json`) as Json),
    require("ajv/dist/refs/json-schema-2020-12/schema.json") as Json,
  ];
  for (const part of parts) {
    Object.assign(properties, rewrite(part["properties"], rename));
    for (const [name, def] of Object.entries((part["$defs"] ?? {}) as Json)) defs[`${META_SCHEMA_DEFS["2020-12"]}-${name}`] = rewrite(def, rename);
  }
  defs[META_SCHEMA_DEFS["2020-12"]] = closed(properties, "JSON Schema 2020-12 meta-schema, flattened", "A JSON Schema (draft 2020-12).");
  return defs;
}

function metaDraft07(): Json {
  const source = require("ajv/dist/refs/json-schema-draft-07.json") as Json;
  const self = `#/$defs/${META_SCHEMA_DEFS["draft-07"]}`;
  const rename = (ref: string): string => {
    if (ref === "#") return self;
    const local = /^#\/definitions\/(.+)$/.exec(ref);
    if (!local) throw new Error(`unexpected reference ${ref} in the draft-07 meta-schema`);
    return `${self}-${local[1]}`;
  };
  const defs: Json = {};
  for (const [name, def] of Object.entries(source["definitions"] as Json)) defs[`${META_SCHEMA_DEFS["draft-07"]}-${name}`] = rewrite(def, rename);
  defs[META_SCHEMA_DEFS["draft-07"]] = closed(
    rewrite(source["properties"], rename) as Json,
    "JSON Schema draft-07 meta-schema, flattened",
    "A JSON Schema (draft-07).",
  );
  return defs;
}

/**
 * `$defs` for a tool schema (`toolSchema`: draft-07 when its `$schema` says so, else 2020-12) and both
 * meta-schemas it refers to.
 */
export function toolSchemaDefs(): Json {
  return {
    toolSchema: {
      type: "object",
      if: { required: ["$schema"], properties: { $schema: { enum: ["http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema"] } } },
      then: { $ref: `#/$defs/${META_SCHEMA_DEFS["draft-07"]}` },
      else: { $ref: `#/$defs/${META_SCHEMA_DEFS["2020-12"]}` },
    },
    ...meta2020(),
    ...metaDraft07(),
  };
}
