import { Ajv, type ErrorObject, type SchemaValidateFunction, type Options, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import * as ajvFormats from "ajv-formats";
import { fullFormats } from "ajv-formats/dist/formats.js";
import equalModule from "ajv/dist/runtime/equal.js";
import { RE2JS } from "re2js";
import { ToolpactError, type ValidationIssue } from "./errors.js";
import { canonicalJson, deepFreezeJson, escapePointerSegment, isDeeplyFrozen, schemaHash } from "./input.js";

/** A compiled JSON Schema validator; one per schema document. */
export interface SchemaValidator {
  /** schemaHash of the document it was compiled from. */
  readonly hash: string;
  /** Every issue of `value` against the schema; empty means valid. */
  validate(value: unknown): readonly ValidationIssue[];
}

/** The JSON Schema dialects a tool schema may declare. */
export type SchemaDialect = "2020-12" | "draft-07";

const DRAFT_07_URIS = new Set(["http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema"]);
const DRAFT_2020_URIS = new Set([
  "https://json-schema.org/draft/2020-12/schema",
  "https://json-schema.org/draft/2020-12/schema#",
]);

/** The dialect a schema's `$schema` names (2020-12 when absent); undefined for any other `$schema`. */
export function schemaDialect(schema: unknown): SchemaDialect | undefined {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return "2020-12";
  const declared = (schema as { $schema?: unknown }).$schema;
  if (declared === undefined) return "2020-12";
  if (typeof declared !== "string") return undefined;
  if (DRAFT_2020_URIS.has(declared)) return "2020-12";
  if (DRAFT_07_URIS.has(declared)) return "draft-07";
  return undefined;
}

/**
 * Why a `pattern` cannot be used, or undefined when it can. Patterns run on RE2 (re2js), a
 * linear-time engine: no pattern can stall the process, whatever the input. The price is RE2's syntax:
 * lookaround and backreferences do not exist there and are rejected when the schema is loaded.
 */
export function patternProblem(pattern: string): string | undefined {
  try {
    RE2JS.compile(RE2JS.translateRegExp(pattern));
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

interface LinearRegExp {
  test(text: string): boolean;
  toString(): string;
}

/** ajv's regExp engine option, backed by RE2: matching time is linear in the input's length. */
const linearRegExp = Object.assign(
  (pattern: string, flags: string): LinearRegExp => {
    const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
    return { test: (text: string) => compiled.test(text), toString: () => `/${pattern}/${flags}` };
  },
  { code: "toolpact:re2js" },
);

const addFormats = ((ajvFormats as unknown as { default?: unknown }).default ?? ajvFormats) as unknown as (
  ajv: Ajv,
) => Ajv;

/** A WHATWG-parsed http(s)/ftp URL: linear in its length, unlike ajv-formats' `url` regex (quadratic on long input). */
function isWebUrl(text: string): boolean {
  if (!/^(?:https?|ftp):\/\//i.test(text) || /\s/.test(text)) return false;
  try {
    return new URL(text).hostname !== "";
  } catch {
    return false;
  }
}

/**
 * ajv-formats checks most formats with backtracking regexes. Each one RE2 can run is moved onto RE2, so a
 * format check is linear in the input like a `pattern`; `url` gets a URL-parser check. The rest (dates and
 * times, `uri`, `duration`, `hostname`, ...) are anchored or length-bounded before any backtracking.
 */
function addLinearFormats(ajv: Ajv): Ajv {
  addFormats(ajv);
  for (const [name, format] of Object.entries(fullFormats)) {
    const regex = format instanceof RegExp ? format : undefined;
    if (!regex || name === "url") continue;
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(RE2JS.translateRegExp(regex.source), regex.flags.includes("i") ? RE2JS.CASE_INSENSITIVE : 0);
    } catch {
      continue; // lookaround: keep ajv-formats' own check (bounded by its anchors)
    }
    ajv.addFormat(name, { type: "string", validate: (text: string) => compiled.test(text) });
  }
  ajv.addFormat("url", { type: "string", validate: isWebUrl });
  return ajv;
}

/** fast-deep-equal, as ajv ships it (a CommonJS default export). */
const deepEqual = ((equalModule as unknown as { default?: unknown }).default ?? equalModule) as (a: unknown, b: unknown) => boolean;

/** The first pair of equal items `[earlier, later]`, or undefined when all differ. */
function firstDuplicate(items: readonly unknown[]): [number, number] | undefined {
  // Scalars are their own key; containers are keyed by canonical JSON, which is JSON Schema equality:
  // 1 and 1.0 are one number, and object member order does not matter. One pass: linear in the array.
  const scalars = new Map<unknown, number>();
  const containers = new Map<string, number>();
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    if (typeof item !== "object" || item === null) {
      const seen = scalars.get(item);
      if (seen !== undefined) return [seen, index];
      scalars.set(item, index);
      continue;
    }
    let key: string;
    try {
      key = canonicalJson(item);
    } catch {
      // Not JSON (a raw value that skipped prepareInput): compare it the way ajv does.
      return quadraticDuplicate(items);
    }
    const seen = containers.get(key);
    if (seen !== undefined) return [seen, index];
    containers.set(key, index);
  }
  return undefined;
}

function quadraticDuplicate(items: readonly unknown[]): [number, number] | undefined {
  for (let later = 1; later < items.length; later++) {
    for (let earlier = 0; earlier < later; earlier++) if (deepEqual(items[earlier], items[later])) return [earlier, later];
  }
  return undefined;
}

/**
 * `uniqueItems` in linear time. ajv's own keyword compares every pair of non-scalar items: a 1 MiB
 * array of small objects takes minutes, so it is replaced on both engines before any schema compiles.
 */
const uniqueItems: SchemaValidateFunction = (schema: unknown, data: unknown): boolean => {
  if (schema !== true || !Array.isArray(data)) return true;
  const duplicate = firstDuplicate(data);
  if (duplicate === undefined) return true;
  const [earlier, later] = duplicate;
  uniqueItems.errors = [
    {
      keyword: "uniqueItems",
      params: { i: later, j: earlier },
      message: `must NOT have duplicate items (items ## ${earlier} and ${later} are identical)`,
    },
  ];
  return false;
};

function withLinearUniqueItems(ajv: Ajv): Ajv {
  ajv.removeKeyword("uniqueItems");
  ajv.addKeyword({ keyword: "uniqueItems", type: "array", schemaType: "boolean", errors: true, validate: uniqueItems });
  return ajv;
}

/** One options object for both dialects, resolved once. */
const AJV_OPTIONS: Options = {
  allErrors: true,
  // `required` and `properties` see own properties only: a prototype key such as `toString` is absent.
  ownProperties: true,
  strictSchema: false,
  strictNumbers: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  validateFormats: true,
  logger: false,
  code: { regExp: linearRegExp },
};

let engines: { readonly "2020-12": Ajv; readonly "draft-07": Ajv } | undefined;

/** The ajv instances, made on first use (their construction compiles meta-schemas). */
export function schemaEngine(dialect: SchemaDialect): Ajv {
  engines ??= {
    "2020-12": withLinearUniqueItems(addLinearFormats(new Ajv2020(AJV_OPTIONS) as unknown as Ajv)),
    "draft-07": withLinearUniqueItems(addLinearFormats(new Ajv(AJV_OPTIONS))),
  };
  return engines[dialect];
}

const validatorsByHash = new Map<string, SchemaValidator>();
const compiledByIdentity = new WeakMap<object, SchemaValidator>();

/**
 * Compiles a JSON Schema once per document: the cache is keyed by schemaHash, so equal documents share
 * one validator (a deep-frozen schema, as loaded manifests hold, is also found by identity without
 * hashing). 2020-12 unless `$schema` names draft-07. The schema is copied first, so later changes to the
 * caller's object cannot change what the validator checks. ajv 8 + ajv-formats with all errors;
 * `required`/`properties` see own properties only; NaN and Infinity are not numbers; `pattern`,
 * `patternProperties` and regex formats run on RE2, so no schema can stall the process.
 * @throws ToolpactError MANIFEST_INVALID when the schema cannot be compiled (unknown `$schema`,
 * unresolvable `$ref`, a pattern RE2 cannot run, ...).
 */
export function compileSchema(schema: unknown): SchemaValidator {
  const identity = isDeeplyFrozen(schema) ? (schema as object) : undefined;
  if (identity) {
    const known = compiledByIdentity.get(identity);
    if (known) return known;
  }
  const hash = schemaHash(schema);
  let validator = validatorsByHash.get(hash);
  if (!validator) {
    validator = buildValidator(schema, hash);
    validatorsByHash.set(hash, validator);
  }
  if (identity) compiledByIdentity.set(identity, validator);
  return validator;
}

function buildValidator(schema: unknown, hash: string): SchemaValidator {
  const dialect = schemaDialect(schema);
  if (dialect === undefined) {
    throw new ToolpactError(
      "MANIFEST_INVALID",
      `schema ${hash.slice(0, 12)} declares an unsupported "$schema" ${JSON.stringify((schema as { $schema?: unknown }).$schema)}: use "https://json-schema.org/draft/2020-12/schema" or "http://json-schema.org/draft-07/schema#"`,
    );
  }
  // A private, frozen copy of exactly the text that was hashed.
  const copy = deepFreezeJson(JSON.parse(canonicalJson(schema)) as unknown);
  if (typeof copy !== "boolean" && (typeof copy !== "object" || copy === null || Array.isArray(copy))) {
    throw new ToolpactError("MANIFEST_INVALID", `a JSON Schema is an object or a boolean, got ${canonicalJson(copy)}`);
  }
  const ajv = schemaEngine(dialect);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(copy);
  } catch (error) {
    throw new ToolpactError(
      "MANIFEST_INVALID",
      `schema ${hash.slice(0, 12)} cannot be compiled: ${(error as Error).message}`,
      {},
      { cause: error },
    );
  } finally {
    // Our cache owns compiled validators; ajv's own registry must not grow or collide on `$id`.
    if (typeof copy === "object") ajv.removeSchema(copy);
  }
  return Object.freeze({
    hash,
    validate(value: unknown): readonly ValidationIssue[] {
      if (validate(value)) return NO_ISSUES;
      return toIssues(validate.errors ?? []);
    },
  });
}

const NO_ISSUES: readonly ValidationIssue[] = Object.freeze([]);

/** Turns ajv's errors into JSON Pointer issues with human messages, without duplicates. */
export function toIssues(errors: readonly ErrorObject[]): readonly ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const issue = toIssue(error);
    const key = issue.path + "\u0000" + issue.message;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

const LISTED_VALUES = 12;

function listValues(values: readonly unknown[]): string {
  const shown = values.slice(0, LISTED_VALUES).map((value) => JSON.stringify(value));
  const rest = values.length - shown.length;
  return rest > 0 ? `${shown.join(", ")} and ${rest} more` : shown.join(", ");
}

function toIssue(error: ErrorObject): ValidationIssue {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required": {
      const missing = String(params["missingProperty"]);
      return {
        path: `${error.instancePath}/${escapePointerSegment(missing)}`,
        message: `must have required property '${missing}'`,
      };
    }
    case "additionalProperties": {
      const extra = String(params["additionalProperty"]);
      return {
        path: `${error.instancePath}/${escapePointerSegment(extra)}`,
        message: `must NOT have additional properties: '${extra}'`,
      };
    }
    case "type": {
      const type = params["type"];
      const types = Array.isArray(type) ? type : String(type).split(",");
      return { path: error.instancePath, message: `must be ${types.join(" or ")}` };
    }
    case "enum": {
      const allowed = params["allowedValues"];
      return {
        path: error.instancePath,
        message: Array.isArray(allowed) ? `must be equal to one of: ${listValues(allowed)}` : "must be one of the allowed values",
      };
    }
    case "const":
      return { path: error.instancePath, message: `must be equal to ${JSON.stringify(params["allowedValue"])}` };
    default:
      return { path: error.instancePath, message: error.message ?? `must satisfy "${error.keyword}"` };
  }
}
