// Property-based tests of the manifest loader: 10,000 generated cases each.
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseManifest } from "./loader.js";
import { EFFECTS } from "@toolpact/protocol";
import { applyManifestDefaults, manifestSchema, type ManifestInput } from "./manifest.js";
import { RESERVED_TOOL_NAMES } from "./names.js";

const RUNS = { numRuns: 10_000 };

// Names from characters and lengths rather than fc.stringMatching, which costs several times more per value.
const LOWER = [..."abcdefghijklmnopqrstuvwxyz"];
const DIGITS = [..."0123456789"];
/** A letter, then up to `rest` characters of `unit`. */
const word = (unit: readonly string[], rest: number, minRest = 0): fc.Arbitrary<string> =>
  fc
    .tuple(fc.constantFrom(...LOWER), fc.string({ unit: fc.constantFrom(...unit), minLength: minRest, maxLength: rest }))
    .map(([first, others]) => first + others);
const segment = word([...LOWER, ...DIGITS, "-"], 8); // ^[a-z][a-z0-9-]{0,8}$
const pluginId = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join("."));
const toolName = fc // ^[a-z][a-z0-9]{0,6}(-[a-z0-9]{1,4}){0,2}$
  .tuple(word([...LOWER, ...DIGITS], 6), fc.array(fc.string({ unit: fc.constantFrom(...LOWER, ...DIGITS), minLength: 1, maxLength: 4 }), { maxLength: 2 }))
  .map(([head, parts]) => [head, ...parts].join("-"))
  .filter((name) => !RESERVED_TOOL_NAMES.has(name));
const propertySchema = fc.oneof(
  fc.record({ type: fc.constantFrom("string", "integer", "number", "boolean") }),
  fc.record({ type: fc.constant("string"), maxLength: fc.nat(100), pattern: fc.constantFrom("^[a-z]+$", "^\\S+$", "^.{1,10}$") }),
  fc.record({ enum: fc.uniqueArray(fc.string({ maxLength: 5 }), { minLength: 1, maxLength: 4 }) }),
);
const inputSchema = fc
  .dictionary(word([...LOWER, ..."ABCDEFGHIJKLMNOPQRSTUVWXYZ", ...DIGITS], 8), propertySchema, { maxKeys: 4 })
  .chain((properties) =>
    fc.record(
      { type: fc.constant("object"), properties: fc.constant(properties), required: fc.subarray(Object.keys(properties)), additionalProperties: fc.boolean() },
      { requiredKeys: ["type", "properties"] },
    ),
  );
const tool = fc.record(
  {
    name: toolName,
    version: fc.integer({ min: 1, max: 5 }),
    title: fc.string({ minLength: 1, maxLength: 30 }),
    description: fc.string({ maxLength: 60 }),
    effect: fc.constantFrom(...EFFECTS),
    requiresConfirmation: fc.boolean(),
    minVerificationLevel: fc.integer({ min: 0, max: 3 }),
    recovery: fc.constantFrom("none", "idempotent"),
    timeoutMs: fc.integer({ min: 1, max: 600_000 }),
    inputSchema,
    outputSchema: fc.constant({ type: "object" }),
  },
  { requiredKeys: ["name", "effect", "inputSchema"] },
);
const manifest = fc
  .record(
    {
      id: pluginId,
      name: fc.string({ minLength: 1, maxLength: 30 }),
      version: fc.tuple(fc.nat(20), fc.nat(20), fc.nat(20)).map((parts) => parts.join(".")),
      tools: fc.uniqueArray(tool, { minLength: 1, maxLength: 3, selector: (entry) => `${entry.name}@${entry.version ?? 1}` }),
    },
    { requiredKeys: ["id", "version", "tools"] },
  )
  .map((value) => ({ ...value, permissions: ["tools:provide"] }) as ManifestInput);

/** A manifest as a person might write it: indented or not, with comments and trailing commas. */
function asJsonc(value: unknown, style: { indent: number; comments: boolean }): string {
  const text = JSON.stringify(value, null, style.indent);
  if (!style.comments) return text;
  return `// plugin manifest\n${text.replace(/\n(\s*)\}/g, ",\n$1/* end */ }")}\n/* trailing comment */`;
}

describe("the manifest loader, property-based", () => {
  it("answers any text with a result, never a throw; a refusal has positioned errors", () => {
    const valid = JSON.stringify({
      id: "com.example.x",
      version: "1.0.0",
      permissions: ["tools:provide"],
      tools: [{ name: "t", effect: "read", inputSchema: { type: "object" } }],
    });
    const mutated = fc
      .tuple(
        fc.nat(valid.length),
        fc.nat(8),
        fc.string({ unit: fc.constantFrom("{", "}", "[", "]", ",", ":", '"', "/", "*", "\\", "\n", "1", "e", "-", "\u0000", "\ud800") }),
      )
      .map(([at, cut, insert]) => valid.slice(0, at) + insert + valid.slice(at + cut));
    const text = fc.oneof(
      fc.string({ unit: "binary" }),
      fc.json(),
      mutated,
      fc.jsonValue().map((value) => JSON.stringify({ ...{ id: "a.b", version: "1.0.0" }, tools: [value] })),
    );
    fc.assert(
      fc.property(text, (source) => {
        const result = parseManifest(source, "plugin.json");
        if (result.ok) return;
        expect(result.diagnostics.some((diagnostic) => diagnostic.severity === "error")).toBe(true);
        for (const diagnostic of result.diagnostics) {
          expect(diagnostic.line).toBeGreaterThanOrEqual(1);
          expect(diagnostic.column).toBeGreaterThanOrEqual(1);
          expect(diagnostic.message.length).toBeGreaterThan(0);
        }
      }),
      RUNS,
    );
    // 10,000 runs: seconds on a quiet machine, more beside the rest of the suite.
  }, 120_000);

  it("loads every valid manifest, JSON or JSONC, as written with defaults filled in, and round-trips it", () => {
    fc.assert(
      fc.property(manifest, fc.constantFrom(0, 2), fc.boolean(), (input, indent, comments) => {
        const result = parseManifest(asJsonc(input, { indent, comments }), "plugin.json");
        expect(result.ok ? [] : result.diagnostics).toEqual([]);
        if (!result.ok) return;
        // toEqual only where the values differ strictly: it then shows how (and agrees where only prototypes differ).
        const expected = applyManifestDefaults(manifestSchema.parse(input));
        if (!isDeepStrictEqual(result.manifest, expected)) expect(result.manifest).toEqual(expected);
        // Written back (empty gates, hooks and guards are defaults, not something a manifest may declare) and loaded again.
        const written = Object.fromEntries(Object.entries(result.manifest).filter(([, value]) => !(Array.isArray(value) && value.length === 0)));
        const again = parseManifest(JSON.stringify(written), "plugin.json");
        if (!again.ok || !isDeepStrictEqual(again.manifest, result.manifest)) expect(again.ok && again.manifest).toEqual(result.manifest);
      }),
      RUNS,
    );
    // 10,000 runs: seconds on a quiet machine, more beside the rest of the suite.
  }, 120_000);
});
