// Evaluation cost is bounded (memo.ts): schemas that share subschemas through `$ref` used to be evaluated
// once per path, 2^depth times for a chain of `anyOf`s of two references (issue 23, finding 10: 22 levels
// took 8.4 s for one input). The work is counted as reads of the input: every evaluation of the chain's
// end reads the object it is given, which is a Proxy that counts.
import { describe, expect, it } from "vitest";
import { parseManifest } from "../loader.js";
import { compileSchema } from "../validation.js";

type Combinator = "anyOf" | "oneOf" | "allOf";

/** `depth` levels, each `{ <combinator>: [ref to the next, ref to the next] }`, ending in `end`. */
function chain(combinator: Combinator, depth: number, end: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const $defs: Record<string, unknown> = { [`l${depth}`]: end };
  for (let level = 0; level < depth; level++) {
    const next = { $ref: `#/$defs/l${level + 1}` };
    $defs[`l${level}`] = { [combinator]: [next, { ...next }], ...extra };
  }
  return { $ref: "#/$defs/l0", $defs };
}

/** An object or array whose every read (own-property test, get, key listing) is counted. */
function counted<T extends object>(value: T): { value: T; reads: () => number } {
  let reads = 0;
  const proxy = new Proxy(value, {
    get: (target, key, receiver) => (reads++, Reflect.get(target, key, receiver)),
    has: (target, key) => (reads++, Reflect.has(target, key)),
    getOwnPropertyDescriptor: (target, key) => (reads++, Reflect.getOwnPropertyDescriptor(target, key)),
    ownKeys: (target) => (reads++, Reflect.ownKeys(target)),
  });
  return { value: proxy, reads: () => reads };
}

/** Reads of `input` while validating it (inside what `wrap` puts around it): the work done on the chain's end. */
function readsOf(schema: unknown, input: object, wrap: (value: unknown) => unknown = (value) => value): { reads: number; issues: number } {
  const { value, reads } = counted(input);
  const issues = compileSchema(schema).validate(wrap(value));
  return { reads: reads(), issues: issues.length };
}

// The end needs property "x": `{}` fails it, `{ x: 1 }` passes it. Each case is its combinator's worst input.
const END = { type: "object", required: ["x"] };
const CASES: { combinator: Combinator; input: () => Record<string, unknown> }[] = [
  { combinator: "anyOf", input: () => ({}) }, // every branch fails, so every branch is tried
  { combinator: "allOf", input: () => ({}) }, // issues are collected from every branch
  { combinator: "oneOf", input: () => ({ x: 1 }) }, // two branches pass, so each level fails and all are tried
];

describe("evaluation cost of shared subschemas", () => {
  it("the 22-level anyOf chain of $refs loads (it is a valid schema) and is not refused", () => {
    const schema = { type: "object", ...chain("anyOf", 22, END) };
    const manifest = { id: "com.example.chain", version: "1.0.0", permissions: ["tools:provide"], tools: [{ name: "t", effect: "read", inputSchema: schema }] };
    const result = parseManifest(JSON.stringify(manifest), "chain.plugin.json");
    expect(result.ok ? [] : result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  });

  for (const { combinator, input } of CASES) {
    it(`${combinator}: work grows with the depth, not 2^depth`, () => {
      const shallow = readsOf(chain(combinator, 4, END), input());
      const deep = readsOf(chain(combinator, 16, END), input());
      expect(shallow.issues).toBeGreaterThan(0);
      expect(deep.issues).toBeGreaterThan(0);
      // 2^16 evaluations of the end before; now each reference target meets the input a bounded number of times.
      expect(deep.reads).toBeLessThanOrEqual(shallow.reads * 2);
      expect(deep.reads).toBeLessThan(100);
    });
  }

  it("nested arrays: a chain that descends one array level per step costs the depth, not 2^depth", () => {
    const step = { type: "array", items: { $ref: "#/$defs/step" } };
    const schema = { $ref: "#/$defs/step", $defs: { step: { anyOf: [step, { ...step }] } } };
    const nest = (depth: number) => (end: unknown) => {
      let value = end;
      for (let level = 0; level < depth; level++) value = [value];
      return value;
    };
    // The innermost array is counted: every evaluation of the chain's last step reads it.
    const shallow = readsOf(schema, [{}], nest(4));
    const deep = readsOf(schema, [{}], nest(16));
    expect(deep.issues).toBeGreaterThan(0);
    expect(deep.reads).toBeLessThanOrEqual(shallow.reads * 2);
    expect(deep.reads).toBeLessThan(100);
  });

  it("with unevaluatedProperties (annotations kept per branch), work stays bounded and the answer exact", () => {
    const end = { properties: { x: true, y: true }, required: ["x", "y"] };
    const schema = chain("anyOf", 16, end, { unevaluatedProperties: false });
    const deep = readsOf(schema, { x: 1, z: 2 });
    expect(deep.reads).toBeLessThan(200);
    expect(compileSchema(schema).validate({ x: 1, y: 2 })).toEqual([]);
    expect(compileSchema(schema).validate({ x: 1, y: 2, z: 3 })).toContainEqual({ path: "/z", message: "must NOT have unevaluated properties: 'z'" });
  });

  it("the 22-level chain checks a failing input in milliseconds (exponential evaluation took seconds)", () => {
    for (const { combinator, input } of CASES) {
      const validator = compileSchema(chain(combinator, 22, END));
      const started = performance.now();
      expect(validator.validate(input()).length).toBeGreaterThan(0);
      expect(validator.validate(7).length).toBeGreaterThan(0);
      // Generous for a loaded machine; 2^22 evaluations of the end took 8.4 s.
      expect(performance.now() - started).toBeLessThan(1_000);
    }
  });

  it("a value met at two places (the same object) gets its issues at both paths, each once", () => {
    const schema = {
      type: "object",
      properties: { a: { $ref: "#/$defs/item" }, b: { $ref: "#/$defs/item" } },
      $defs: { item: { anyOf: [{ $ref: "#/$defs/named" }, { $ref: "#/$defs/named" }] }, named: END },
    };
    const shared = { y: 1 };
    expect(compileSchema(schema).validate({ a: shared, b: shared })).toEqual([
      { path: "/a/x", message: "must have required property 'x'" },
      { path: "/a", message: "must match a schema in anyOf" },
      { path: "/b/x", message: "must have required property 'x'" },
      { path: "/b", message: "must match a schema in anyOf" },
    ]);
    expect(compileSchema(schema).validate({ a: { x: 1 }, b: shared })).toEqual([
      { path: "/b/x", message: "must have required property 'x'" },
      { path: "/b", message: "must match a schema in anyOf" },
    ]);
  });
});
