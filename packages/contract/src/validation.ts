import { Ajv, type Options } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { ToolpactError, type ValidationIssue } from "@toolpact/protocol";
import { canonicalJson, schemaHash } from "./canonical-json.js";
import { deepFreezeJson, isDeeplyFrozen } from "./input.js";
import { compileLinearPattern, describePatternRefusal } from "./pattern/linear-pattern.js";
import type { Check, PendingIssue } from "./schema/check.js";
import { SchemaCompiler } from "./schema/compile.js";
import { Memo } from "./schema/memo.js";
import { SchemaDocument, schemaDialect, type SchemaDialect, type SchemaRefusal } from "./schema/document.js";

export { schemaDialect, type SchemaDialect, type SchemaRefusal } from "./schema/document.js";

/** A compiled JSON Schema validator; one per schema document. */
export interface SchemaValidator {
  /** schemaHash of the document it was compiled from. */
  readonly hash: string;
  /** Every issue of `value` against the schema; empty means valid. */
  validate(value: unknown): readonly ValidationIssue[];
}

/**
 * Why a `pattern` cannot be used, or undefined when it can. Patterns have ECMA-262 meaning (unicode
 * mode) and run on RE2 (re2js), a linear-time engine: no pattern can stall the process, whatever the
 * input. Lookaround and backreferences cannot run in linear time and are refused when the schema is loaded.
 */
export function patternProblem(pattern: string): string | undefined {
  const compiled = compileLinearPattern(pattern);
  return compiled.ok ? undefined : describePatternRefusal(pattern, compiled.refusal);
}

/** Options of the meta-schema engines: they judge schemas, never instances. */
const META_OPTIONS: Options = {
  allErrors: true,
  strictSchema: false,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  validateFormats: false,
  logger: false,
};

let metaEngines: { readonly "2020-12": Ajv; readonly "draft-07": Ajv } | undefined;

/** The ajv instance that checks a tool schema against its dialect's meta-schema (made on first use). */
export function metaSchemaEngine(dialect: SchemaDialect): Ajv {
  metaEngines ??= { "2020-12": new Ajv2020(META_OPTIONS) as unknown as Ajv, "draft-07": new Ajv(META_OPTIONS) };
  return metaEngines[dialect];
}

/**
 * What in `schema` cannot be evaluated exactly, each with the JSON Pointer of the keyword: `$id`,
 * references that leave the document or do not resolve, patterns the linear-time engine cannot run, `$ref`
 * cycles that consume no data, an unsupported `$schema`. Empty when the schema can be compiled.
 */
export function schemaRefusals(schema: unknown): readonly SchemaRefusal[] {
  return analyze(schema).refusals;
}

function analyze(schema: unknown): { document?: SchemaDocument; refusals: readonly SchemaRefusal[] } {
  const dialect = schemaDialect(schema);
  if (dialect === undefined) {
    const declared = JSON.stringify((schema as { $schema?: unknown }).$schema);
    return {
      refusals: [
        {
          pointer: "/$schema",
          keyword: "$schema",
          message: `unsupported "$schema" ${declared}: use "https://json-schema.org/draft/2020-12/schema" or "http://json-schema.org/draft-07/schema#"`,
        },
      ],
    };
  }
  if (typeof schema !== "boolean" && (typeof schema !== "object" || schema === null || Array.isArray(schema))) {
    return { refusals: [{ pointer: "", keyword: "", message: `a JSON Schema is an object or a boolean, got ${canonicalJson(schema)}` }] };
  }
  const document = new SchemaDocument(schema as boolean | Record<string, unknown>, dialect);
  return { document, refusals: document.problems() };
}

/** A schema that passed the analysis: its validator, whose closures are built once, by `build`. */
interface Prepared {
  readonly validator: SchemaValidator;
  build(): void;
}

const preparedByHash = new Map<string, Prepared>();
const preparedByIdentity = new WeakMap<object, Prepared>();

/**
 * Compiles a JSON Schema once per document: the cache is keyed by schemaHash, so equal documents share
 * one validator (a deep-frozen schema, as loaded manifests hold, is also found by identity without
 * hashing). 2020-12 unless `$schema` names draft-07. The schema is copied first, so later changes to the
 * caller's object cannot change what the validator checks. Evaluation follows the specification exactly
 * (checked against the official JSON-Schema-Test-Suite) with all errors; `required`/`properties` see own
 * properties only; NaN and Infinity are not numbers; `pattern` and `patternProperties` have ECMA-262
 * meaning on a linear-time engine, so no schema can stall the process; formats are assertions.
 * @throws ToolpactError MANIFEST_INVALID naming the keyword and its JSON Pointer when the schema cannot be
 * evaluated exactly (see schemaRefusals).
 */
export function compileSchema(schema: unknown): SchemaValidator {
  const { validator, build } = preparedOf(schema);
  build();
  return validator;
}

/**
 * Everything compileSchema checks (the canonical copy, the hash, the analysis), without building the
 * evaluator: what the manifest loader needs to know. The validator is cached; compileSchema, or its first
 * use, builds it.
 * @throws ToolpactError MANIFEST_INVALID as compileSchema does.
 */
export function prepareSchema(schema: unknown): void {
  preparedOf(schema);
}

function preparedOf(schema: unknown): Prepared {
  const identity = isDeeplyFrozen(schema) ? (schema as object) : undefined;
  if (identity) {
    const known = preparedByIdentity.get(identity);
    if (known) return known;
  }
  const hash = schemaHash(schema);
  let prepared = preparedByHash.get(hash);
  if (!prepared) {
    prepared = prepare(schema, hash);
    preparedByHash.set(hash, prepared);
  }
  if (identity) preparedByIdentity.set(identity, prepared);
  return prepared;
}

function prepare(schema: unknown, hash: string): Prepared {
  // A private, frozen copy of exactly the text that was hashed.
  const copy = deepFreezeJson(JSON.parse(canonicalJson(schema)) as unknown);
  const { document, refusals } = analyze(copy);
  if (!document || refusals.length > 0) {
    const [first] = refusals;
    const where = first!.pointer === "" ? "" : ` at ${first!.pointer}`;
    const more = refusals.length > 1 ? ` (and ${refusals.length - 1} more)` : "";
    throw new ToolpactError("MANIFEST_INVALID", `schema ${hash.slice(0, 12)} cannot be evaluated exactly${where}: ${first!.message}${more}`);
  }
  let root: Check | undefined;
  const build = (): Check => (root ??= new SchemaCompiler(document).root());
  const validator: SchemaValidator = Object.freeze({
    hash,
    validate(value: unknown): readonly ValidationIssue[] {
      // One pass collects every issue: paths are made only for issues, so a valid value costs no more.
      const issues: PendingIssue[] = [];
      if ((root ?? build())(value, Memo.run(issues), undefined)) return NO_ISSUES;
      return withoutRepeats(issues);
    },
  });
  return { validator, build };
}

const NO_ISSUES: readonly ValidationIssue[] = Object.freeze([]);

/** Issues in order of discovery, each (path, message) once. */
function withoutRepeats(issues: ValidationIssue[]): readonly ValidationIssue[] {
  if (issues.length < 2) return issues;
  if (issues.length <= 16) {
    // Few issues: comparing pairs costs less than keying them.
    return issues.filter((issue, index) => {
      for (let earlier = 0; earlier < index; earlier++) if (issues[earlier]!.path === issue.path && issues[earlier]!.message === issue.message) return false;
      return true;
    });
  }
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = issue.path + "\u0000" + issue.message;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
