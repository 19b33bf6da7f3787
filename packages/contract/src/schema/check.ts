/** The shape of compiled schemas and the small pieces every keyword uses. */
import type { ValidationIssue } from "@toolpact/protocol";
import { escapePointerSegment } from "../input.js";
import { compileLinearPattern, type LinearPattern } from "../pattern/linear-pattern.js";
import type { SchemaDialect } from "./document.js";
import type { Evaluated } from "./evaluated.js";

/** Where issues go; null while only validity is asked. */
export interface Run {
  readonly issues: ValidationIssue[] | null;
}

/** Validity only: the first failure ends the evaluation. */
export const VALIDITY_ONLY: Run = Object.freeze({ issues: null });

/** One compiled schema: evaluates `data` at `path`, recording into `seen` what it evaluated (for unevaluated*). */
export type Check = (data: unknown, path: string, run: Run, seen: Evaluated | undefined) => boolean;

/** A JSON object (a schema object or an instance object). */
export type Json = Record<string, unknown>;

/** What keyword compilers need from the compiler: the dialect, and the compiled subschema at a location. */
export interface Subschemas {
  readonly dialect: SchemaDialect;
  sub(pointer: string, keyword: string | number, schema: unknown): Check;
}

/** The check of `true` and of no keywords. */
export const pass: Check = () => true;

/** Records an issue (when issues are collected) and fails. */
export function fail(run: Run, path: string, message: string): false {
  run.issues?.push({ path, message });
  return false;
}

/** The JSON Pointer of a member or item, built only when issues are collected. */
export function at(run: Run, path: string, key: string | number): string {
  if (run.issues === null) return path;
  return typeof key === "number" ? `${path}/${key}` : `${path}/${escapePointerSegment(key)}`;
}

/** A JSON object: not null, not an array. */
export function isObject(data: unknown): data is Json {
  return typeof data === "object" && data !== null && !Array.isArray(data);
}

/** Runs checks in order: all of them when collecting issues, up to the first failure otherwise. */
export function all(checks: readonly Check[]): Check {
  if (checks.length === 0) return pass;
  if (checks.length === 1) return checks[0]!;
  if (checks.length === 2) {
    const [first, second] = checks as [Check, Check];
    return (data, path, run, seen) => {
      if (first(data, path, run, seen)) return second(data, path, run, seen);
      if (run.issues !== null) second(data, path, run, seen);
      return false;
    };
  }
  return (data, path, run, seen) => {
    let valid = true;
    for (const check of checks) {
      if (!check(data, path, run, seen)) {
        if (run.issues === null) return false;
        valid = false;
      }
    }
    return valid;
  };
}

/** A keyword whose value is a number, if it is one. */
export function number(schema: Json, keyword: string): number | undefined {
  const value = schema[keyword];
  return typeof value === "number" ? value : undefined;
}

/** The compiled form of a pattern SchemaDocument accepted. */
export function linear(source: string): LinearPattern {
  const compiled = compileLinearPattern(source);
  // SchemaDocument refuses every pattern that does not compile before the compiler runs.
  if (!compiled.ok) throw new Error(`pattern ${JSON.stringify(source)} was not refused before compilation`);
  return compiled.pattern;
}
