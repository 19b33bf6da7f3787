/** Load-time checks of tool schemas (inputSchema, outputSchema), reported at their position in the manifest. */
import type { ErrorObject } from "ajv";
import type { Node } from "jsonc-parser";
import { closestMatch, didYouMean } from "./hints.js";
import {
  MAX_NESTING,
  keyNodeOf,
  labelOf,
  memberOf,
  pointerOf,
  propertyOf,
  show,
  typeName,
  expectedName,
  valueAtPath,
  type ManifestCheck,
  type Path,
} from "./manifest-document.js";
import { FORMATS } from "./schema/formats.js";
import {
  SIMPLE_TYPES,
  SCHEMA_KEYWORDS,
  SCHEMA_MAP_KEYWORDS,
  SCHEMA_ARRAY_KEYWORDS,
  CODEGEN_UNSUPPORTED,
  KNOWN_KEYWORDS,
  ANNOTATION_KEYWORDS,
  CODE_INJECTING_KEYWORDS,
} from "./schema-vocabulary.js";
import { metaSchemaEngine, prepareSchema, schemaDialect, schemaRefusals, type SchemaDialect } from "./validation.js";

// ---------------------------------------------------------------------------------------------------------
// Tool schemas: meta-schema, root type, `$ref`, `$id`, patterns, codegen warnings.

interface SchemaContext {
  readonly check: ManifestCheck;
  readonly root: Node;
  readonly rootPath: readonly (string | number)[];
  readonly dialect: SchemaDialect;
  /** Pointers (relative to the schema root) where the walk already reported an error. */
  readonly reported: Set<string>;
}

/** Checks every tool's inputSchema and outputSchema: meta-schema, root type, `$ref`, `$id`, patterns, warnings. */
export function checkToolSchemas(check: ManifestCheck, root: Node, value: unknown): void {
  const tools = memberOf(root, "tools");
  if (tools?.type !== "array") return;
  (tools.children ?? []).forEach((tool, index) => {
    for (const key of ["inputSchema", "outputSchema"] as const) {
      const property = propertyOf(tool, key);
      const schemaNode = property?.children?.[1];
      if (!schemaNode || schemaNode.type !== "object") continue;
      const path = ["tools", index, key];
      const before = check.diagnostics.length;
      checkSchemaDocument(check, schemaNode, path, valueAtPath(value, path));
      if (key === "inputSchema") checkInputRoot(check, keyNodeOf(property)!, schemaNode, path);
      const foundErrors = check.diagnostics.slice(before).some((d) => d.severity === "error");
      if (!foundErrors) compileCheck(check, schemaNode, path, valueAtPath(value, path));
    }
  });
}

function checkInputRoot(check: ManifestCheck, keyNode: Node, schemaNode: Node, path: Path): void {
  const typeNode = memberOf(schemaNode, "type");
  if (!typeNode) {
    check.error(keyNode, path, `${labelOf(path)} must be an object schema: add "type": "object"`);
  } else if (typeNode.value !== "object") {
    check.error(
      typeNode,
      [...path, "type"],
      `${labelOf(path)} must be an object schema: its root "type" must be "object"; got ${show(typeNode.value ?? "a non-string value")}`,
    );
  }
}

function checkSchemaDocument(check: ManifestCheck, schemaNode: Node, path: Path, schema: unknown): void {
  const declared = memberOf(schemaNode, "$schema");
  let dialect = schemaDialect(schema);
  if (dialect === undefined) {
    check.error(
      declared ?? schemaNode,
      [...path, "$schema"],
      `unsupported "$schema" ${show(declared?.value)}: use "https://json-schema.org/draft/2020-12/schema" (the default) or "http://json-schema.org/draft-07/schema#"`,
    );
    dialect = "2020-12";
  }
  const context: SchemaContext = {
    check,
    root: schemaNode,
    rootPath: path,
    dialect,
    reported: new Set(),
  };
  walkSchema(context, schemaNode, []);
  if (declared === undefined || schemaDialect(schema) !== undefined) {
    checkRefusals(context, schema);
    checkMetaSchema(context, schema);
  }
}

/** Keywords refused as keys (`$id`, a `patternProperties` pattern) rather than as values. */
const REFUSED_AT_KEY = new Set(["$id", "patternProperties"]);

/**
 * What the evaluator cannot evaluate exactly (`$id`, references, patterns, `$ref` cycles, ...), each at
 * the keyword's value, or at the key when the key itself is the problem.
 */
function checkRefusals(context: SchemaContext, schema: unknown): void {
  for (const refusal of schemaRefusals(schema)) {
    if (isReported(context, refusal.pointer)) continue;
    const { node, keyNode, path } = nodeAtPointer(context.root, refusal.pointer);
    context.reported.add(refusal.pointer);
    context.check.error(REFUSED_AT_KEY.has(refusal.keyword) ? (keyNode ?? node) : node, [...context.rootPath, ...path], refusal.message);
  }
}

function isReported(context: SchemaContext, pointer: string): boolean {
  return [...context.reported].some((reported) => pointer === reported || pointer.startsWith(reported + "/"));
}

/** The deepest node along a JSON Pointer into a schema node (and its key node, for a member), and the path to it. */
function nodeAtPointer(root: Node, pointer: string): { node: Node; keyNode?: Node; path: (string | number)[] } {
  const segments =
    pointer === ""
      ? []
      : pointer
          .slice(1)
          .split("/")
          .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  const path: (string | number)[] = [];
  let node = root;
  let keyNode: Node | undefined;
  for (const segment of segments) {
    const key: string | number = node.type === "array" ? Number(segment) : segment;
    const next = memberOf(node, key);
    if (!next) break;
    keyNode = typeof key === "string" ? keyNodeOf(propertyOf(node, key)) : undefined;
    node = next;
    path.push(key);
  }
  return { node, ...(keyNode ? { keyNode } : {}), path };
}

function walkSchema(context: SchemaContext, node: Node, path: (string | number)[]): void {
  if (node.type !== "object" || path.length > MAX_NESTING) return;
  const { check } = context;
  for (const property of node.children ?? []) {
    const [keyNode, valueNode] = property.children ?? [];
    if (!keyNode || !valueNode) continue;
    const keyword = String(keyNode.value);
    const at = [...path, keyword];
    const full = [...context.rootPath, ...at];
    const fail = (target: Node, message: string): void => {
      context.reported.add(pointerOf(at));
      check.error(target, full, message);
    };

    if (keyword === "$ref" && valueNode.type !== "string") {
      fail(valueNode, `"$ref" must be a string such as "#/$defs/address"; got ${show(valueNode.value ?? valueNode.type)}`);
    } else if (keyword === "type") {
      checkType(valueNode, fail);
    } else if (keyword === "format" && valueNode.type === "string") {
      const format = valueNode.value as string;
      if (!FORMATS.has(format)) {
        check.warning(valueNode, full, `format ${JSON.stringify(format)} is not known, so it is not checked${didYouMean(format, [...FORMATS.keys()])}`);
      }
    } else if (CODE_INJECTING_KEYWORDS.has(keyword)) {
      fail(keyNode, `"${keyword}" is not allowed: it would paste code into generated clients; describe the type with JSON Schema keywords`);
    } else if (!KNOWN_KEYWORDS.has(keyword) && !keyword.startsWith("x-")) {
      const hint = closestMatch(keyword, KNOWN_KEYWORDS);
      if (hint !== undefined && !ANNOTATION_KEYWORDS.has(hint)) {
        // A misspelt constraint silently checks nothing (think "requird"): refuse it.
        fail(keyNode, `unknown keyword ${JSON.stringify(keyword)}; did you mean ${JSON.stringify(hint)}? As written it is ignored and checks nothing`);
      } else if (hint !== undefined) {
        check.warning(keyNode, full, `unknown keyword ${JSON.stringify(keyword)} is ignored; did you mean ${JSON.stringify(hint)}?`);
      } else {
        check.warning(
          keyNode,
          full,
          `unknown keyword ${JSON.stringify(keyword)} is ignored by validation and codegen (prefix extensions with "x-" to silence this)`,
        );
      }
    }

    if (CODEGEN_UNSUPPORTED.has(keyword)) {
      check.warning(
        keyNode,
        full,
        `"${keyword}" is validated, but codegen cannot express it as a TypeScript type: the generated type is wider than the schema`,
      );
    }

    if (SCHEMA_KEYWORDS.has(keyword)) {
      walkSchema(context, valueNode, at);
    } else if (SCHEMA_MAP_KEYWORDS.has(keyword) || (keyword === "dependencies" && valueNode.type === "object")) {
      for (const entry of valueNode.type === "object" ? (valueNode.children ?? []) : []) {
        const [entryKey, entryValue] = entry.children ?? [];
        if (entryKey && entryValue) walkSchema(context, entryValue, [...at, String(entryKey.value)]);
      }
    } else if (SCHEMA_ARRAY_KEYWORDS.has(keyword) || (keyword === "items" && valueNode.type === "array")) {
      for (const [index, child] of (valueNode.children ?? []).entries()) walkSchema(context, child, [...at, index]);
    } else if (keyword === "items") {
      walkSchema(context, valueNode, at);
    }
  }
}

function checkType(node: Node, fail: (target: Node, message: string) => void): void {
  const checkOne = (entry: Node): void => {
    if (entry.type !== "string") {
      fail(entry, `"type" names a JSON Schema type as a string; got ${show(entry.value ?? entry.type)}`);
      return;
    }
    const name = entry.value as string;
    if ((SIMPLE_TYPES as readonly string[]).includes(name)) return;
    const hint = closestMatch(name, SIMPLE_TYPES);
    fail(
      entry,
      `${JSON.stringify(name)} is not a JSON Schema type; ${hint === undefined ? `use one of ${SIMPLE_TYPES.map((t) => JSON.stringify(t)).join(", ")}` : `did you mean ${JSON.stringify(hint)}?`}`,
    );
  };
  if (node.type === "array") {
    const seen = new Set<unknown>();
    for (const entry of node.children ?? []) {
      checkOne(entry);
      if (seen.has(entry.value)) fail(entry, `"type" lists ${show(entry.value)} twice`);
      seen.add(entry.value);
    }
  } else {
    checkOne(node);
  }
}

/** Meta-schema validation; errors where the walk already spoke are left out. */
function checkMetaSchema(context: SchemaContext, schema: unknown): void {
  const ajv = metaSchemaEngine(context.dialect);
  let valid: boolean;
  try {
    valid = ajv.validateSchema(schema as object) as boolean;
  } catch (error) {
    context.check.error(context.root, context.rootPath, `${labelOf(context.rootPath)} cannot be checked: ${(error as Error).message}`);
    return;
  }
  if (valid) return;
  const groups = new Map<string, ErrorObject[]>();
  for (const error of ajv.errors ?? []) {
    const path = error.instancePath;
    if (isReported(context, path)) continue;
    const group = groups.get(path);
    if (group) group.push(error);
    else groups.set(path, [error]);
  }
  for (const [pointer, errors] of groups) {
    const { node, path } = nodeAtPointer(context.root, pointer);
    context.check.error(node, [...context.rootPath, ...path], metaMessage(path, errors, valueAtPath(schema, path)));
  }
}

/** The keyword a meta-schema error is about: the last non-index segment, with indices shown. */
function keywordLabel(path: Path): string {
  let index = path.length - 1;
  let suffix = "";
  while (index >= 0 && typeof path[index] === "number") {
    suffix = `[${path[index]}]${suffix}`;
    index--;
  }
  return index < 0 ? "the schema" : `${JSON.stringify(path[index])}${suffix}`;
}

function metaMessage(path: Path, errors: readonly ErrorObject[], value: unknown): string {
  const label = keywordLabel(path);
  const pick = (keyword: string): ErrorObject | undefined => errors.find((error) => error.keyword === keyword);
  const enumError = pick("enum");
  if (enumError) {
    const allowed = (enumError.params as { allowedValues?: unknown[] }).allowedValues ?? [];
    const hint =
      typeof value === "string"
        ? didYouMean(
            value,
            allowed.filter((v): v is string => typeof v === "string"),
          )
        : "";
    return `${label} must be one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}; got ${show(value)}${hint}`;
  }
  const typeError = pick("type");
  if (typeError) {
    const raw = (typeError.params as { type?: unknown }).type;
    const types = (Array.isArray(raw) ? raw.map(String) : String(raw).split(",")).map(expectedName);
    const also = errors
      .filter((error) => error.keyword === "type" && error !== typeError)
      .flatMap((error) => {
        const more = (error.params as { type?: unknown }).type;
        return (Array.isArray(more) ? more.map(String) : String(more).split(",")).map(expectedName);
      });
    const all = [...new Set([...types, ...also])];
    return `${label} must be ${all.join(" or ")}; got ${typeName(value)}`;
  }
  const specific = errors.find((error) => !["anyOf", "oneOf", "allOf", "if", "not", "$ref"].includes(error.keyword)) ?? errors[0];
  return `${label} ${specific?.message ?? "is not valid JSON Schema"}; got ${show(value)}`;
}

function compileCheck(check: ManifestCheck, schemaNode: Node, path: Path, schema: unknown): void {
  try {
    prepareSchema(schema);
  } catch (error) {
    check.error(schemaNode, path, `${labelOf(path)} cannot be compiled: ${(error as Error).message}`);
  }
}
