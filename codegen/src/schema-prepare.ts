import { codegenError } from "./codegen-error.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type SchemaObject = { [key: string]: Json };

/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAPS: ReadonlySet<string> = new Set(["properties", "patternProperties", "$defs", "definitions"]);
/** Keywords whose value is an array of subschemas. */
const SCHEMA_ARRAYS = ["allOf", "anyOf", "oneOf"];
/** Keywords whose value is a subschema, or (draft-07 `items`, and those above) an array of them. */
const SCHEMA_VALUES: ReadonlySet<string> = new Set(["additionalProperties", "items", "additionalItems", ...SCHEMA_ARRAYS]);

/**
 * Keywords codegen cannot express as types. They are dropped before json-schema-to-typescript sees
 * them, so the type comes out wider than the schema (validation still applies), never narrower or wrong.
 */
const INEXPRESSIBLE: ReadonlySet<string> = new Set([
  "extends",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "dependentSchemas",
  "dependencies",
  "dependentRequired",
  "unevaluatedItems",
  "unevaluatedProperties",
  "$dynamicRef",
  "$dynamicAnchor",
  "$recursiveRef",
  "$recursiveAnchor",
]);

/** json-schema-to-typescript pastes these into the output verbatim: a manifest must not carry code. */
const CODE_KEYWORDS: ReadonlySet<string> = new Set(["tsType", "tsEnumNames"]);

/** A `$ref` to a plain-name fragment: an `$anchor`. */
const ANCHOR_REF = /^#[A-Za-z_][-A-Za-z0-9._]*$/;

/**
 * A copy of a tool schema that json-schema-to-typescript turns into exactly the types the schema
 * says: the root is named `rootName`; `$anchor` references become JSON Pointers; an object schema
 * that names no properties stays open (an index signature), since every other object is closed;
 * inexpressible keywords are dropped; line breaks in text are "\n". `where` names the schema in errors.
 */
export function prepareSchema(schema: unknown, rootName: string, where: string): SchemaObject {
  if (!isObject(schema)) throw codegenError(`${where} is not a JSON Schema object`);
  const walk: Walk = { where, schemas: new Set(), anchors: new Map(), refs: [] };
  const copy = copySchema(schema as SchemaObject, "", walk);
  for (const holder of walk.refs) holder.$ref = resolveRef(holder.$ref as string, walk);
  copy.title = rootName;
  return copy;
}

/**
 * A `$ref` as a JSON Pointer fragment that lands on a schema this walk copied. Anything else (another
 * document, a non-schema location such as a `const` value or an extension keyword) is refused, so no
 * reference can lead the type generator into data it would read as a schema.
 */
function resolveRef(ref: string, walk: Walk): string {
  if (ANCHOR_REF.test(ref)) {
    const target = walk.anchors.get(ref.slice(1));
    if (target === undefined) throw codegenError(`${walk.where}: "$ref" ${JSON.stringify(ref)} names no "$anchor" in this schema`);
    return `#${target.split("/").map(encodeURIComponent).join("/")}`;
  }
  let pointer: string | undefined;
  if (ref.startsWith("#")) {
    try {
      pointer = ref.slice(1).split("/").map(decodeURIComponent).join("/");
    } catch {
      pointer = undefined;
    }
  }
  if (pointer === undefined || !walk.schemas.has(pointer)) {
    throw codegenError(
      `${walk.where}: "$ref" ${JSON.stringify(ref)} does not point at a schema inside this schema document; ` +
        'refer to "#/$defs/<name>" (or "#" for the root)',
    );
  }
  return ref;
}

interface Walk {
  readonly where: string;
  /** JSON Pointers of every schema copied: the only places a `$ref` may point at. */
  readonly schemas: Set<string>;
  /** `$anchor` name -> JSON Pointer of the schema that declares it. */
  readonly anchors: Map<string, string>;
  /** Schemas with a `$ref`, checked (and anchors turned into pointers) once every target is known. */
  readonly refs: SchemaObject[];
}

function copySchema(schema: SchemaObject, pointer: string, walk: Walk): SchemaObject {
  const out: SchemaObject = {};
  for (const keyword of Object.keys(schema)) {
    const value = schema[keyword]!;
    if (CODE_KEYWORDS.has(keyword)) {
      throw codegenError(`${walk.where} at "${pointer || "/"}": "${keyword}" is not allowed: it would paste code into the generated client; remove it`);
    }
    if (INEXPRESSIBLE.has(keyword)) continue;
    if (SCHEMA_MAPS.has(keyword) && isObject(value)) {
      const at = `${pointer}/${pointerSegment(keyword)}`;
      const map: SchemaObject = {};
      for (const name of Object.keys(value)) map[name] = copyValue(value[name], `${at}/${pointerSegment(name)}`, walk);
      out[keyword] = map;
    } else if (SCHEMA_VALUES.has(keyword)) {
      const at = `${pointer}/${pointerSegment(keyword)}`;
      out[keyword] = Array.isArray(value) ? value.map((sub, index) => copyValue(sub, `${at}/${index}`, walk)) : copyValue(value, at, walk);
    } else if (keyword === "title" || keyword === "description") {
      out[keyword] = typeof value === "string" ? value.replace(/\r\n?/g, "\n") : value;
    } else {
      out[keyword] = value;
    }
  }
  // 2020-12 tuples (`prefixItems`, with `items` for the rest) have no draft-07 equivalent here: an array of unknown.
  if ("prefixItems" in out) {
    delete out.prefixItems;
    delete out.items;
  }
  if (typeof out.$anchor === "string") walk.anchors.set(out.$anchor, pointer);
  if (typeof out.$ref === "string") walk.refs.push(out);
  walk.schemas.add(pointer);
  if (isOpenObject(out)) out.additionalProperties = true;
  return out;
}

function copyValue(value: Json | undefined, pointer: string, walk: Walk): Json {
  return isObject(value) ? copySchema(value as SchemaObject, pointer, walk) : (value ?? null);
}

/**
 * An object schema that names no properties and says nothing about others accepts any object: it
 * gets an index signature. (Objects that name properties are closed unless they say otherwise.)
 */
function isOpenObject(schema: SchemaObject): boolean {
  const type = schema.type;
  const isObjectType = type === "object" || (Array.isArray(type) && type.includes("object"));
  if (!isObjectType) return false;
  const properties = schema.properties;
  const namesProperties = isObject(properties) && Object.keys(properties).length > 0;
  return (
    !namesProperties &&
    !("patternProperties" in schema) &&
    !("additionalProperties" in schema) &&
    !("$ref" in schema) &&
    !SCHEMA_ARRAYS.some((keyword) => keyword in schema)
  );
}

function pointerSegment(segment: string): string {
  return /[~/]/.test(segment) ? segment.replaceAll("~", "~0").replaceAll("/", "~1") : segment;
}

function isObject(value: unknown): value is { [key: string]: Json } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
