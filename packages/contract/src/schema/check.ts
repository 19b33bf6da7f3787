/** The shape of compiled schemas and the small pieces every keyword uses. */
import { escapePointerSegment } from "../input.js";
import { compileLinearPattern, type LinearPattern } from "../pattern/linear-pattern.js";
import type { SchemaDialect } from "./document.js";
import type { Evaluated } from "./evaluated.js";
import type { Memo } from "./memo.js";

/** An issue while it is made: its path is relative to the instance being checked until the root is reached. */
export interface PendingIssue {
  path: string;
  readonly message: string;
}

/**
 * Where issues go; null while only validity is asked. A check records issues at its own instance (path "")
 * or at a member or item of it; the check that descended into a child puts the child's segment in front of
 * the issues the child recorded. Paths are made only for issues, so collecting costs nothing while the
 * instance is valid.
 */
export interface Run {
  readonly issues: PendingIssue[] | null;
  /** The results kept during this validation (memo.ts); `memo.validity` is its validity-only run. */
  readonly memo: Memo;
}

/** One compiled schema: evaluates `data`, recording into `seen` what it evaluated (for unevaluated*). */
export type Check = (data: unknown, run: Run, seen: Evaluated | undefined) => boolean;

/** A JSON object (a schema object or an instance object). */
export type Json = Record<string, unknown>;

/** What keyword compilers need from the compiler: the dialect, and the compiled subschema at a location. */
export interface Subschemas {
  readonly dialect: SchemaDialect;
  sub(pointer: string, keyword: string | number, schema: unknown): Check;
}

/** The check of `true` and of no keywords. */
export const pass: Check = () => true;

/** Records an issue at the instance being checked (when issues are collected) and fails. */
export function fail(run: Run, message: string): false {
  run.issues?.push({ path: "", message });
  return false;
}

/** The JSON Pointer segment of a member or item: `/name` escaped, or `/index`. */
export function segmentOf(key: string | number): string {
  return typeof key === "number" ? `/${key}` : `/${escapePointerSegment(key)}`;
}

/** Records an issue at a member or item of the instance being checked and fails. */
export function failAt(run: Run, key: string | number, message: string): false {
  run.issues?.push({ path: segmentOf(key), message });
  return false;
}

/** Puts a member's or item's segment (see segmentOf) in front of the issues recorded since `from` (the child's). */
export function within(issues: PendingIssue[], from: number, segment: string): void {
  for (let index = from; index < issues.length; index++) issues[index]!.path = segment + issues[index]!.path;
}

/** Checks the member or item `key` of the instance; the issues it records are placed under `key`. */
export function checkChild(check: Check, value: unknown, key: string | number, run: Run): boolean {
  const issues = run.issues;
  if (issues === null) return check(value, run, undefined);
  const from = issues.length;
  if (check(value, run, undefined)) return true;
  within(issues, from, segmentOf(key));
  return false;
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
    return (data, run, seen) => {
      if (first(data, run, seen)) return second(data, run, seen);
      if (run.issues !== null) second(data, run, seen);
      return false;
    };
  }
  return (data, run, seen) => {
    let valid = true;
    for (const check of checks) {
      if (!check(data, run, seen)) {
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
