// Property-based tests of the canonical form and digest (RFC 8785): 10,000 generated cases each.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ToolpactError } from "@toolpact/protocol";
import { canonicalJson, inputDigest } from "./canonical-json.js";
import { prepareInput } from "./input.js";
import { jsonEqual } from "./schema/json-values.js";

const RUNS = { numRuns: 10_000 };
const KEY = new Uint8Array(32).fill(7);

/** Numbers of every shape: integers, -0, exponent forms, the largest and tiniest doubles. */
const number = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 1e21, 1e-7, 5e-324, -5e-324, Number.MAX_VALUE, -Number.MAX_VALUE, 2 ** 53, 2 ** 53 + 2, 0.1, 1 / 3, 100, 1e300),
);
/** Well-formed strings with BMP and astral characters, controls, quotes and backslashes. */
const text = fc.oneof(
  fc.string({ unit: "grapheme" }),
  fc.string({ unit: fc.constantFrom("a", "é", "😀", "\u0000", "\u001f", '"', "\\", "\u2028", "\ufeff", "\u007f") }),
);
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small" }, fc.constant(null), fc.boolean(), number, text, tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 5 }),
  object: fc.dictionary(text, tie("value"), { maxKeys: 5 }),
})).value;

/** The same value with every object's members in another order. */
function reordered(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((item, index) => reordered(item, seed + index));
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value);
  const shuffled = entries.map((entry, index) => ({ entry, rank: Math.sin(seed * 31 + index * 17) })).sort((a, b) => a.rank - b.rank);
  const out: Record<string, unknown> = {};
  for (const { entry } of shuffled)
    Object.defineProperty(out, entry[0], { value: reordered(entry[1], seed + 1), enumerable: true, writable: true, configurable: true });
  return out;
}

describe("canonical JSON and the input digest, property-based", () => {
  it("ignore member order: a reordered value has the same canonical form and digest", () => {
    fc.assert(
      fc.property(json, fc.integer(), (value, seed) => {
        const other = reordered(value, seed);
        expect(canonicalJson(other)).toBe(canonicalJson(value));
        expect(inputDigest(KEY, other)).toBe(inputDigest(KEY, value));
      }),
      RUNS,
    );
  });

  it("give equal digests to equal JSON values and different digests to different ones", () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        const same = jsonEqual(a, b);
        expect(canonicalJson(a) === canonicalJson(b)).toBe(same);
        expect(inputDigest(KEY, a) === inputDigest(KEY, b)).toBe(same);
      }),
      RUNS,
    );
  });

  it("write numbers as ECMAScript does (RFC 8785), -0 as 0, and parse back to the same value", () => {
    fc.assert(
      fc.property(number, (value) => {
        const written = canonicalJson(value);
        expect(written).toBe(Object.is(value, -0) ? "0" : String(value));
        expect(JSON.parse(written)).toBe(value === 0 ? 0 : value);
        expect(inputDigest(KEY, value)).toBe(inputDigest(KEY, JSON.parse(written) as number));
      }),
      RUNS,
    );
  });

  it("write strings with minimal escaping, members sorted by UTF-16 code units, and round-trip", () => {
    fc.assert(
      fc.property(json, (value) => {
        const written = canonicalJson(value);
        expect(written).not.toMatch(/\s(?=(?:[^"\\]|\\.)*(?:"(?:[^"\\]|\\.)*"(?:[^"\\]|\\.)*)*$)/u); // no whitespace outside strings
        const parsed = JSON.parse(written) as unknown;
        expect(jsonEqual(parsed, value)).toBe(true);
        expect(canonicalJson(parsed)).toBe(written);
        expect(canonicalJson(prepareInput(value, { maxBytes: Number.POSITIVE_INFINITY, maxDepth: 1_000 }))).toBe(written);
      }),
      RUNS,
    );
    fc.assert(
      fc.property(text, (value) => {
        expect(canonicalJson(value)).toBe(JSON.stringify(value));
      }),
      RUNS,
    );
    fc.assert(
      fc.property(fc.dictionary(text, fc.constant(1), { maxKeys: 8 }), (value) => {
        // Array.prototype.sort's default order compares UTF-16 code units, as RFC 8785 does.
        const members = Object.keys(value)
          .sort()
          .map((key) => `${JSON.stringify(key)}:1`);
        expect(canonicalJson(value)).toBe(`{${members.join(",")}}`);
      }),
      RUNS,
    );
  });

  it("refuse strings that are not Unicode text (a lone surrogate)", () => {
    fc.assert(
      fc.property(text, fc.constantFrom("\ud800", "\udfff", "\udc00x"), text, (before, lone, after) => {
        expect(() => canonicalJson({ [before]: before + lone + after })).toThrow(ToolpactError);
      }),
      RUNS,
    );
  });
});
