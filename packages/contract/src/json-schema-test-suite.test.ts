// The official JSON-Schema-Test-Suite (draft 2020-12), run through the code paths a tool schema takes: the
// manifest loader's load-time checks, then compileSchema and validate on prepareInput's copy, as the runtime
// does. A schema is either evaluated exactly or refused at load; the figures are printed and kept in
// docs/manifest.md.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { prepareInput } from "./input.js";
import { parseManifest } from "./loader.js";
import { FORMATS } from "./schema/formats.js";
import { compileSchema, schemaRefusals } from "./validation.js";

const SUITE = fileURLToPath(new URL("../fixtures/json-schema-test-suite/tests/draft2020-12/", import.meta.url));

interface SuiteGroup {
  readonly description: string;
  readonly schema: unknown;
  readonly tests: readonly { readonly description: string; readonly data: unknown; readonly valid: boolean }[];
}

type Outcome =
  | { readonly kind: "passed" }
  | { readonly kind: "refused"; readonly reason: string }
  | { readonly kind: "deviation" }
  | { readonly kind: "wrong" }
  | { readonly kind: "crashed"; readonly error: string };

interface CaseResult {
  readonly file: string;
  readonly group: string;
  readonly test: string;
  readonly outcome: Outcome;
}

/** What a refusal is about, for the figures: DESIGN.md's exclusions and the linear-time engine's limits. */
function refusalReason(schema: unknown): string {
  const [first] = schemaRefusals(schema);
  if (!first) return "refused by the loader";
  if (first.keyword === "$id") return "$id (another resource)";
  if ((first.keyword === "$ref" || first.keyword === "$dynamicRef") && first.message.includes("points outside")) return "reference leaving the document";
  if (first.keyword === "$schema") return "meta-schema in another resource ($schema)";
  if (first.keyword === "pattern" || first.keyword === "patternProperties") return `${first.keyword} the linear-time engine cannot run`;
  return `${first.keyword}: ${first.message}`;
}

const MANIFEST_HEAD =
  '{ "id": "com.example.suite", "version": "1.0.0", "permissions": ["tools:provide"], "tools": [{ "name": "t", "effect": "read", "inputSchema": { "type": "object" }, "outputSchema": ';

/** The loader's verdict on a schema, as a tool's outputSchema (an inputSchema adds only the root "type": "object" rule). */
function loadErrors(schema: unknown): string[] {
  if (typeof schema === "boolean") return []; // a manifest's schemas are objects; compileSchema takes booleans
  const result = parseManifest(`${MANIFEST_HEAD}${JSON.stringify(schema)} }] }`, "suite.plugin.json");
  return result.ok ? [] : result.diagnostics.filter((d) => d.severity === "error").map((d) => d.message);
}

/** The suite expects formats to be annotations here; toolpact asserts them (a documented choice). */
function isFormatAnnotationCase(file: string, test: string): boolean {
  return file === "format.json" && test.endsWith("is only an annotation by default");
}

function runFile(directory: string, file: string): CaseResult[] {
  const groups = JSON.parse(readFileSync(join(directory, file), "utf8")) as SuiteGroup[];
  const results: CaseResult[] = [];
  for (const group of groups) {
    const errors = loadErrors(group.schema);
    let validate: ((value: unknown) => boolean) | undefined;
    let refusal: string | undefined;
    if (errors.length > 0) {
      refusal = refusalReason(group.schema);
    } else {
      try {
        const validator = compileSchema(group.schema);
        validate = (value) => validator.validate(prepareInput(value)).length === 0;
      } catch (error) {
        refusal = schemaRefusals(group.schema).length > 0 ? refusalReason(group.schema) : undefined;
        if (refusal === undefined) {
          for (const test of group.tests)
            results.push({ file, group: group.description, test: test.description, outcome: { kind: "crashed", error: String(error) } });
          continue;
        }
      }
    }
    for (const test of group.tests) {
      const where = { file, group: group.description, test: test.description };
      if (refusal !== undefined || !validate) {
        results.push({ ...where, outcome: { kind: "refused", reason: refusal ?? "refused" } });
        continue;
      }
      let outcome: Outcome;
      try {
        const valid = validate(test.data);
        if (valid === test.valid) outcome = { kind: "passed" };
        else if (isFormatAnnotationCase(file, test.description) && !valid) outcome = { kind: "deviation" };
        else outcome = { kind: "wrong" };
      } catch (error) {
        outcome = { kind: "crashed", error: (error as Error).message };
      }
      results.push({ ...where, outcome });
    }
  }
  return results;
}

function runDirectory(directory: string): CaseResult[] {
  return readdirSync(directory)
    .filter((file) => file.endsWith(".json"))
    .sort()
    .flatMap((file) => runFile(directory, file));
}

function count(results: readonly CaseResult[], kind: Outcome["kind"]): number {
  return results.filter((result) => result.outcome.kind === kind).length;
}

function refusalReasons(results: readonly CaseResult[]): Map<string, number> {
  const reasons = new Map<string, number>();
  for (const { outcome } of results) if (outcome.kind === "refused") reasons.set(outcome.reason, (reasons.get(outcome.reason) ?? 0) + 1);
  return reasons;
}

/** One line of figures, as printed and as kept in docs/manifest.md. */
function figures(label: string, results: readonly CaseResult[]): string {
  const reasons = [...refusalReasons(results)].map(([reason, n]) => `${n} ${reason}`).join(", ");
  return (
    `${label}: ${results.length} cases: ${count(results, "passed")} passed, ${count(results, "refused")} refused at load` +
    (reasons ? ` (${reasons})` : "") +
    `, ${count(results, "deviation")} deliberate deviations, ${count(results, "wrong")} wrong, ${count(results, "crashed")} crashed`
  );
}

function describeCase(result: CaseResult): string {
  const extra = result.outcome.kind === "crashed" ? `: ${result.outcome.error}` : "";
  return `${result.file}: ${result.group}: ${result.test}${extra}`;
}

/** Refusals DESIGN.md allows in the required tests: other resources and references that leave the document. */
const ALLOWED_REQUIRED_REFUSALS = new Set(["$id (another resource)", "reference leaving the document", "meta-schema in another resource ($schema)"]);

describe("JSON-Schema-Test-Suite, draft 2020-12", () => {
  it("required tests: every schema evaluated exactly or refused at load for another resource; formats asserted", () => {
    const results = runDirectory(SUITE);
    console.log(figures("required", results));
    expect(results.filter((r) => r.outcome.kind === "wrong" || r.outcome.kind === "crashed").map(describeCase)).toEqual([]);
    const outsideAllowed = results.filter((r) => r.outcome.kind === "refused" && !ALLOWED_REQUIRED_REFUSALS.has(r.outcome.reason));
    expect(outsideAllowed.map((r) => `${describeCase(r)} (${(r.outcome as { reason: string }).reason})`)).toEqual([]);
    // The one deliberate deviation: the formats toolpact checks are assertions, one case per format.
    const checked = (group: string): boolean => FORMATS.has(group.replace(/ format$/, ""));
    expect(results.filter((r) => r.outcome.kind === "deviation").map((r) => r.group)).toEqual([
      ...new Set(results.filter((r) => r.file === "format.json" && checked(r.group)).map((r) => r.group)),
    ]);
    expect(count(results, "passed")).toBeGreaterThan(1_100);
  });

  it("optional ECMA-262 regex tests: never a wrong answer; a construct may be refused at load", () => {
    const results = ["ecmascript-regex.json", "non-bmp-regex.json"].flatMap((file) => runFile(join(SUITE, "optional"), file));
    console.log(figures("optional ECMA-262 regex", results));
    expect(results.filter((r) => r.outcome.kind !== "passed" && r.outcome.kind !== "refused").map(describeCase)).toEqual([]);
  });

  it("other optional tests: never a wrong answer", () => {
    const files = readdirSync(join(SUITE, "optional")).filter((file) => file.endsWith(".json") && !file.includes("regex"));
    const results = files.sort().flatMap((file) => runFile(join(SUITE, "optional"), file));
    console.log(figures("other optional", results));
    expect(results.filter((r) => r.outcome.kind === "wrong" || r.outcome.kind === "crashed").map(describeCase)).toEqual([]);
  });

  it("optional format tests: every format checked exactly, IDNA2008 (hostname, idn-hostname, idn-email) included", () => {
    const results = runDirectory(join(SUITE, "optional", "format"));
    console.log(figures("optional format", results));
    expect(results.filter((r) => r.outcome.kind !== "passed").map(describeCase)).toEqual([]);
  });
});
