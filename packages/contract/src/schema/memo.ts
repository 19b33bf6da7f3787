/**
 * Bounded evaluation: the results of the schemas `$ref` leads to, kept per instance value for one
 * validation. Without references a schema is a tree and reaches each (subschema, instance location) by one
 * path; a reference lets many paths share a subschema, and a chain of `anyOf`s of two references each
 * reached its end 2^depth times (22 levels took seconds for one input). With the results kept, each
 * (reference target, instance value) is evaluated at most once per mode (validity only or with issues; with
 * or without annotations for unevaluated*), so a validation costs at most about schema size times input
 * size. Evaluation is pure: the result depends on the schema and the value only, never on where the value
 * sits, so a value met again (the same object, or an equal primitive) gets the same answer.
 */
import type { Check, PendingIssue, Run } from "./check.js";
import { Evaluated } from "./evaluated.js";

/** What one reference target answered for one instance value. */
interface Entry {
  valid: boolean;
  /** The issues it recorded (paths relative to the value, each once); kept once computed with issues. */
  issues: readonly PendingIssue[] | undefined;
  /** What it evaluated, for unevaluated*; kept once computed with annotations asked. */
  evaluated: Evaluated | undefined;
}

/** The results of one validation, per reference target; made by `Memo.run`, dropped with the validation. */
export class Memo {
  /** Validity only, within this validation: the first failure ends the evaluation. */
  readonly validity: Run = { issues: null, memo: this };
  private readonly tables: Map<unknown, Entry>[] = [];

  /** The run of a new validation: issues are collected into `issues`. */
  static run(issues: PendingIssue[]): Run {
    return { issues, memo: new Memo() };
  }

  /** The results of one reference target (by its slot). */
  table(slot: number): Map<unknown, Entry> {
    let table = this.tables[slot];
    if (table === undefined) this.tables[slot] = table = new Map();
    return table;
  }
}

/** Numbers reference targets within one compiled document, so each has its own table in a Memo. */
export class MemoSlots {
  private count = 0;

  /** `check` with its results kept per instance value within one validation. */
  memoized(check: Check): Check {
    const slot = this.count++;
    return (data, run, seen) => {
      const memo = run.memo;
      const table = memo.table(slot);
      const entry = table.get(data);
      if (entry !== undefined && answers(entry, run, seen)) {
        if (seen !== undefined && entry.evaluated !== undefined) seen.merge(entry.evaluated);
        if (!entry.valid && run.issues !== null) for (const issue of entry.issues!) run.issues.push({ path: issue.path, message: issue.message });
        return entry.valid;
      }
      const evaluated = seen && new Evaluated();
      const issues = run.issues;
      const from = issues === null ? 0 : issues.length;
      const valid = check(data, run, evaluated);
      if (evaluated !== undefined) seen!.merge(evaluated);
      const kept = issues === null || valid ? undefined : keepOnce(issues, from);
      if (entry === undefined) {
        table.set(data, { valid, issues: kept, evaluated });
      } else {
        if (kept !== undefined) entry.issues = kept;
        if (evaluated !== undefined) entry.evaluated = evaluated;
      }
      return valid;
    };
  }
}

/**
 * Whether a kept entry answers this call: a failure answers a validity-only call as it is, and one with
 * issues when its issues were kept; annotations are needed when `seen` asks for them. (Annotations of a
 * failure matter only while issues are collected: otherwise the failure ends the evaluation.)
 */
function answers(entry: Entry, run: Run, seen: Evaluated | undefined): boolean {
  if (!entry.valid && run.issues === null) return true;
  if (!entry.valid && entry.issues === undefined) return false;
  return seen === undefined || entry.evaluated !== undefined;
}

/**
 * The issues recorded since `from`, each (path, message) once in order of discovery: repeats are removed
 * in place as well (the validation keeps each once anyway), so shared subschemas cannot multiply them.
 * Copies are kept, since the caller puts segments in front of the recorded issues' paths.
 */
function keepOnce(issues: PendingIssue[], from: number): readonly PendingIssue[] {
  const seen = new Set<string>();
  let to = from;
  for (let index = from; index < issues.length; index++) {
    const issue = issues[index]!;
    const key = `${issue.path}\u0000${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues[to++] = issue;
  }
  issues.length = to;
  return issues.slice(from).map((issue) => ({ path: issue.path, message: issue.message }));
}
