import { describe, expect, it } from "vitest";
import { ToolpactError } from "@toolpact/protocol";
import { schemaHash } from "./canonical-json.js";
import { prepareInput } from "./input.js";
import { compileSchema, patternProblem, schemaDialect } from "./validation.js";

const recordSchema = {
  type: "object",
  properties: {
    title: { type: "string", minLength: 1 },
    count: { type: "integer" },
    ratio: { type: "number" },
    priority: { enum: ["low", "high"] },
    items: {
      type: "array",
      items: {
        type: "object",
        properties: { title: { type: "string" } },
        required: ["title"],
      },
    },
  },
  required: ["title"],
  additionalProperties: false,
};

function issuesOf(schema: unknown, value: unknown) {
  return compileSchema(schema).validate(value);
}

/** Issues in path order: ajv's order follows its keyword evaluation, which no caller should rely on. */
function byPath(issues: readonly { path: string; message: string }[]) {
  return [...issues].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

describe("compileSchema: issues", () => {
  const validator = compileSchema(recordSchema);

  it("accepts a valid value with no issues", () => {
    expect(validator.validate({ title: "x", count: 2, ratio: 0.5, priority: "low", items: [{ title: "a" }] })).toEqual([]);
  });

  it("reports a missing required property at its own path", () => {
    expect(validator.validate({})).toEqual([{ path: "/title", message: "must have required property 'title'" }]);
  });

  it("reports a wrong type", () => {
    expect(validator.validate({ title: 5 })).toEqual([{ path: "/title", message: "must be string" }]);
  });

  it("reports an enum miss with the allowed values", () => {
    expect(validator.validate({ title: "x", priority: "urgent" })).toEqual([{ path: "/priority", message: 'must be equal to one of: "low", "high"' }]);
  });

  it("reports a nested array path", () => {
    expect(validator.validate({ title: "x", items: [{ title: "a" }, { title: 7 }, {}] })).toEqual([
      { path: "/items/1/title", message: "must be string" },
      { path: "/items/2/title", message: "must have required property 'title'" },
    ]);
  });

  it("tells integer from number", () => {
    expect(validator.validate({ title: "x", count: 1.5, ratio: 1 })).toEqual([{ path: "/count", message: "must be integer" }]);
    expect(validator.validate({ title: "x", count: 2, ratio: 1.5 })).toEqual([]);
  });

  it("does not take NaN or Infinity for numbers, even on raw values", () => {
    expect(validator.validate({ title: "x", ratio: Number.NaN })).toEqual([{ path: "/ratio", message: "must be number" }]);
    expect(validator.validate({ title: "x", ratio: Number.POSITIVE_INFINITY })).toEqual([{ path: "/ratio", message: "must be number" }]);
    expect(validator.validate({ title: "x", count: Number.NEGATIVE_INFINITY })).toEqual([{ path: "/count", message: "must be integer" }]);
  });

  it("reports an extra property under additionalProperties: false at that property", () => {
    expect(validator.validate({ title: "x", color: "red" })).toEqual([{ path: "/color", message: "must NOT have additional properties: 'color'" }]);
  });

  it("reports every problem at once", () => {
    expect(validator.validate({ count: "2", color: 1 })).toHaveLength(3);
  });

  it("escapes JSON Pointer segments", () => {
    const schema = { type: "object", properties: { "a/b": { type: "string" } }, required: ["c~d"] };
    expect(byPath(issuesOf(schema, { "a/b": 1 }))).toEqual([
      { path: "/a~1b", message: "must be string" },
      { path: "/c~0d", message: "must have required property 'c~d'" },
    ]);
  });

  it("names the constant a const wants", () => {
    expect(issuesOf({ const: 5 }, 6)).toEqual([{ path: "", message: "must be equal to 5" }]);
  });
});

describe("compileSchema: own properties only", () => {
  it("does not let a prototype key satisfy required", () => {
    const schema = { type: "object", required: ["toString", "constructor", "__proto__"] };
    expect(issuesOf(schema, {}).map((issue) => issue.path)).toEqual(["/toString", "/constructor", "/__proto__"]);
    expect(issuesOf(schema, prepareInput({})).map((issue) => issue.path)).toEqual(["/toString", "/constructor", "/__proto__"]);
  });

  it("accepts those keys when they are own data", () => {
    const schema = { type: "object", required: ["toString", "__proto__"] };
    const input = prepareInput(JSON.parse('{"toString": "x", "__proto__": 1}'));
    expect(issuesOf(schema, input)).toEqual([]);
  });

  it("does not validate an inherited property against properties", () => {
    const schema = { type: "object", properties: { toString: { type: "string" } } };
    // Object.prototype.toString is a function; were it seen, "must be string" would be reported.
    expect(issuesOf(schema, {})).toEqual([]);
  });

  it("sees an own __proto__ key as an additional property", () => {
    const schema = { type: "object", properties: { a: { type: "number" } }, additionalProperties: false };
    const input = prepareInput(JSON.parse('{"a": 1, "__proto__": {"admin": true}}'));
    expect(issuesOf(schema, input)).toEqual([{ path: "/__proto__", message: "must NOT have additional properties: '__proto__'" }]);
  });

  it("works on null-prototype objects", () => {
    const bare = Object.assign(Object.create(null) as object, { title: "x" });
    expect(issuesOf({ type: "object", required: ["title"] }, bare)).toEqual([]);
  });
});

describe("compileSchema: patterns cannot stall the process", () => {
  it("runs ^(a+)+$ against 50 KB of 'a' followed by '!' quickly", () => {
    const validator = compileSchema({ type: "string", pattern: "^(a+)+$" });
    const evil = "a".repeat(50_000) + "!";
    const started = performance.now();
    expect(validator.validate(evil)).toEqual([{ path: "", message: 'must match pattern "^(a+)+$"' }]);
    expect(validator.validate("a".repeat(50_000))).toEqual([]);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("also for patternProperties and for polynomial patterns on a 1 MB string", () => {
    const validator = compileSchema({
      type: "object",
      patternProperties: { "^(x|x)*$": { type: "string" } },
      properties: { s: { type: "string", pattern: "\\s*\\s*\\s*$" } },
    });
    const started = performance.now();
    validator.validate({ ["x".repeat(30_000) + "!"]: "ok", s: " ".repeat(1_000_000) + "a" });
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it("refuses patterns that need backtracking (lookaround, backreferences), naming the construct", () => {
    expect(patternProblem("^(?=a)a$")).toBe(
      'pattern "^(?=a)a$" cannot be used ((?=...) at offset 1): lookahead needs a backtracking engine; patterns run on a linear-time engine, which has no lookaround: write the pattern without it, or check this in the provider',
    );
    expect(patternProblem("x(?<!a)")).toMatch(/\(\?<!\.\.\.\) at offset 1\): negative lookbehind needs a backtracking engine/);
    expect(patternProblem("(a)\\1")).toBe(
      'pattern "(a)\\\\1" cannot be used (\\1 at offset 3): a backreference matches text captured earlier, which no linear-time engine can do: check this in the provider',
    );
    expect(patternProblem("(?<x>a)\\k<x>")).toMatch(/\\k<x> at offset 7\): a named backreference/);
    expect(patternProblem("a{1001}")).toMatch(/\{1001\} at offset 1\): a repetition count above 1000/);
    expect(patternProblem("^[a-z][a-z0-9-]*$")).toBeUndefined();
    expect(() => compileSchema({ type: "string", pattern: "(a)\\1" })).toThrow(ToolpactError);
  });

  it("refuses patterns whose worst case on the strings they may meet is too costly, until maxLength bounds them", () => {
    // RE2's DFA gives up on this one and its NFA pays per instruction per character: ~18 s on 1 MiB.
    const bomb = { type: "string", pattern: "[ab]*a[ab]{400}c" };
    expect(() => compileSchema(bomb)).toThrow(/it compiles to 406 instructions, .* add "maxLength" \(at most 165292\) or simplify the pattern/);
    expect(compileSchema({ ...bomb, maxLength: 100_000 }).validate("ab".repeat(10) + "c")).toHaveLength(1);
    expect(() => compileSchema({ type: "object", patternProperties: { "[ab]*a[ab]{100}c": true } })).toThrow(
      /on a property name of the input limit's 1048576 characters/,
    );
    // Everyday patterns stay inside the bound without maxLength; `^...$` without unbounded repetition scans little.
    for (const pattern of [
      "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
      "^[A-Za-z0-9]{20,40}$",
      "^\\p{L}[\\p{L}\\p{Nd} ]*$",
      "^[a-z0-9-]{1,40}$",
      "^.{1,200}$",
    ]) {
      expect(patternProblem(pattern), pattern).toBeUndefined();
      expect(() => compileSchema({ type: "string", pattern })).not.toThrow();
    }
  });

  it("refuses groups nested too deep to translate instead of overflowing the stack", () => {
    expect(patternProblem("(".repeat(5_000) + "a" + ")".repeat(5_000))).toMatch(/groups nested more than 100 deep/);
  });

  it("refuses what ECMA-262 does not allow, such as (?i) and \\a", () => {
    expect(patternProblem("(?i)abc")).toMatch(/^pattern "\(\?i\)abc" cannot be used: it is not a valid ECMA-262 regular expression: .*Invalid group/);
    expect(patternProblem("\\a")).toMatch(/not a valid ECMA-262 regular expression/);
    expect(patternProblem("{")).toMatch(/not a valid ECMA-262 regular expression/);
  });

  it("matches ECMAScript syntax that RE2 spells differently", () => {
    const validator = compileSchema({ type: "string", pattern: "^caf\\u00e9 (?<year>\\d{4})$" });
    expect(validator.validate("café 2024")).toEqual([]);
    expect(validator.validate("cafe 2024")).toHaveLength(1);
  });
});

describe("compileSchema: uniqueItems cannot stall the process", () => {
  /** The largest array of distinct items a 1 MiB input can hold. */
  function fullArray(item: (index: number) => unknown): unknown[] {
    const items: unknown[] = [];
    let bytes = 16;
    for (let index = 0; bytes < 1024 * 1024 - 32; index++) {
      const value = item(index);
      bytes += JSON.stringify(value).length + 1;
      items.push(value);
    }
    return items;
  }

  it("checks a 1 MiB array of distinct objects and arrays in linear time", () => {
    // ajv's own uniqueItems compares every pair: minutes for this input.
    const validator = compileSchema({ type: "object", properties: { items: { type: "array", uniqueItems: true } } });
    for (const item of [(index: number) => ({ k: index }), (index: number) => [index]]) {
      const input = prepareInput({ items: fullArray(item) }, { maxBytes: 1024 * 1024, maxDepth: 64 });
      const started = performance.now();
      expect(validator.validate(input)).toEqual([]);
      expect(performance.now() - started).toBeLessThan(2_000);
    }
  });

  it("still finds a duplicate at the end of a 1 MiB array, quickly", () => {
    const validator = compileSchema({ type: "array", uniqueItems: true, items: { type: "object" } });
    const items = fullArray((index) => ({ k: index, tags: ["a", index] }));
    items[items.length - 1] = { tags: ["a", 3], k: 3 };
    const started = performance.now();
    expect(validator.validate(prepareInput(items))).toEqual([
      { path: "", message: `must NOT have duplicate items (items ## 3 and ${items.length - 1} are identical)` },
    ]);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("uses JSON Schema equality: key order is irrelevant, 1 and 1.0 are one number, types differ", () => {
    const validator = compileSchema({ type: "object", properties: { a: { type: "array", uniqueItems: true } } });
    expect(
      validator.validate({
        a: [
          { x: 1, y: [2, { z: 3 }] },
          { y: [2, { z: 3 }], x: 1 },
        ],
      }),
    ).toEqual([{ path: "/a", message: "must NOT have duplicate items (items ## 0 and 1 are identical)" }]);
    expect(validator.validate({ a: [1, 1.0] })).toHaveLength(1);
    expect(validator.validate({ a: [0, -0] })).toHaveLength(1);
    expect(validator.validate({ a: [1, "1", [1], { "1": 1 }, '{"1":1}', "[1]", true, null, "null", [], {}] })).toEqual([]);
    expect(
      validator.validate({
        a: [
          [1, 2],
          [2, 1],
        ],
      }),
    ).toEqual([]);
    expect(validator.validate({ a: ["x", "y", "x"] })).toHaveLength(1);
    expect(compileSchema({ type: "array", uniqueItems: false }).validate([1, 1])).toEqual([]);
  });

  it("applies to draft-07 documents and to raw values that are not JSON", () => {
    const draft07 = compileSchema({ $schema: "http://json-schema.org/draft-07/schema#", type: "array", uniqueItems: true });
    expect(draft07.validate([{ a: 1 }, { a: 1 }])).toHaveLength(1);
    expect(draft07.validate([{ a: 1 }, { a: 2 }])).toEqual([]);
    const raw = compileSchema({ type: "array", uniqueItems: true });
    expect(raw.validate([{ n: Number.NaN }, { n: 1 }])).toEqual([]);
    expect(raw.validate([{ f: 1n }, { f: 1n }])).toHaveLength(1);
  });
});

describe("compileSchema: formats cannot stall the process either", () => {
  it("checks url with a URL parser, in linear time", () => {
    const validator = compileSchema({ type: "string", format: "url" });
    expect(validator.validate("https://example.com/a?b=c")).toEqual([]);
    expect(validator.validate("ftp://files.example.com/x")).toEqual([]);
    for (const bad of ["example.com", "mailto:a@example.com", "http://exa mple.com", "http://"]) {
      expect(validator.validate(bad), bad).toEqual([{ path: "", message: 'must match format "url"' }]);
    }
    // ajv-formats' own url regex needs about a second for 40 KB of this, and grows quadratically.
    const started = performance.now();
    validator.validate("http://" + "::".repeat(200_000) + "!");
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("checks URIs, IRIs, e-mail, date-times, durations and URI templates in linear time", () => {
    const validator = compileSchema({
      type: "object",
      properties: {
        uri: { format: "uri" },
        iri: { format: "iri-reference" },
        email: { format: "email" },
        at: { format: "date-time" },
        duration: { format: "duration" },
        template: { format: "uri-template" },
      },
    });
    expect(
      validator.validate({
        uri: "https://[2001:db8::1]:8080/a?b#c",
        iri: "/âππ",
        email: '"joe bloggs"@[IPv6:::1]',
        at: "1998-12-31T15:59:60.5-08:00",
        duration: "P1Y2M3DT4H5M6S",
        template: "/users/{id}{?q*}",
      }),
    ).toEqual([]);
    expect(
      validator.validate({
        uri: "http://example.com:abc/",
        iri: "#a\\b",
        email: "a..b@example.com",
        at: "1998-12-31T22:59:60Z",
        duration: "P1Y2D",
        template: "{a..b}",
      }),
    ).toHaveLength(6);
    const long = 500_000;
    const started = performance.now();
    validator.validate({
      uri: "http://a/" + "%41".repeat(long) + "%",
      iri: "//" + "@".repeat(long),
      email: "a.".repeat(long) + "@x",
      at: "1".repeat(long),
      duration: "P" + "1".repeat(long) + "Y" + "1".repeat(long) + "X",
      template: "{" + "a.".repeat(long) + "}",
    });
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("runs regex-based formats on RE2", () => {
    const validator = compileSchema({
      type: "object",
      properties: { e: { format: "email" }, t: { format: "uri-template" }, p: { format: "json-pointer" } },
    });
    expect(validator.validate({ e: "A@Example.com", t: "/users/{id}", p: "/a/b~1c" })).toEqual([]);
    expect(validator.validate({ e: "a@", p: "a" })).toHaveLength(2);
    const started = performance.now();
    validator.validate({ e: "a".repeat(300_000) + "@", t: "a@0-".repeat(75_000) + "!", p: "/a-".repeat(100_000) + "~" });
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe("compileSchema: caching and isolation", () => {
  it("compiles once per schema document, keyed by schema hash", () => {
    const a = compileSchema({ type: "object", properties: { q: { type: "string" } } });
    const b = compileSchema({ properties: { q: { type: "string" } }, type: "object" });
    expect(a).toBe(b);
    expect(a.hash).toBe(schemaHash({ type: "object", properties: { q: { type: "string" } } }));
  });

  it("is not affected by later changes to the caller's schema object", () => {
    const schema = { type: "object", properties: { level: { enum: ["a", "b"] } } };
    const validator = compileSchema(schema);
    schema.properties.level.enum.push("c");
    expect(validator.validate({ level: "c" })).toHaveLength(1);
    // The changed object is another document, with a validator of its own.
    expect(compileSchema(schema).validate({ level: "c" })).toEqual([]);
  });

  it("refuses $id: a tool schema is one document, without other resources", () => {
    expect(() => compileSchema({ type: "object", properties: { a: { $id: "https://x.test/s", type: "string" } } })).toThrow(
      /cannot be evaluated exactly at \/properties\/a\/\$id: "\$id" is not allowed in a tool schema/,
    );
  });

  it("resolves local $ref and refuses external ones without network access", () => {
    const local = compileSchema({
      type: "object",
      properties: { a: { $ref: "#/$defs/pos" } },
      $defs: { pos: { type: "integer", minimum: 1 } },
    });
    expect(local.validate({ a: 0 })).toEqual([{ path: "/a", message: "must be >= 1" }]);
    expect(() => compileSchema({ $ref: "https://example.com/schema.json" })).toThrow(
      /cannot be evaluated exactly at \/\$ref: "\$ref" "https:\/\/example.com\/schema.json" points outside this schema/,
    );
  });
});

describe("compileSchema: dialects and formats", () => {
  it("reads the dialect from $schema", () => {
    expect(schemaDialect({})).toBe("2020-12");
    expect(schemaDialect({ $schema: "https://json-schema.org/draft/2020-12/schema" })).toBe("2020-12");
    expect(schemaDialect({ $schema: "http://json-schema.org/draft-07/schema#" })).toBe("draft-07");
    expect(schemaDialect({ $schema: "http://json-schema.org/draft-04/schema#" })).toBeUndefined();
  });

  it("applies draft-07 semantics to draft-07 documents", () => {
    const tuple = compileSchema({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "array",
      items: [{ type: "string" }, { type: "number" }],
      additionalItems: false,
    });
    expect(tuple.validate(["a", 1])).toEqual([]);
    expect(tuple.validate(["a", "b"])).toEqual([{ path: "/1", message: "must be number" }]);
    expect(tuple.validate(["a", 1, 2])).toHaveLength(1);
  });

  it("checks multipleOf on the decimal values exactly, even where a binary quotient underflows or rounds", () => {
    const even = compileSchema({ multipleOf: 2 });
    expect(even.validate(5e-324)).toHaveLength(1); // ajv: 5e-324 / 2 underflows to 0, "a multiple"
    expect(even.validate(1e308)).toEqual([]);
    expect(compileSchema({ multipleOf: 0.0001 }).validate(0.0075)).toEqual([]);
    expect(compileSchema({ multipleOf: 0.1 }).validate(0.3)).toEqual([]);
    expect(compileSchema({ multipleOf: 0.1 }).validate(0.35)).toHaveLength(1);
  });

  it("applies contains to every item, prefixItems or not (ajv 8.20 accepts [1] here)", () => {
    const validator = compileSchema({ prefixItems: [true, { type: "object" }], contains: false });
    expect(validator.validate([1])).toEqual([{ path: "", message: "must contain at least 1 valid item(s)" }]);
    expect(compileSchema({ prefixItems: [true, { type: "object" }], contains: { type: "string" } }).validate([1, {}, "x"])).toEqual([]);
  });

  it("applies 2020-12 semantics by default", () => {
    const tuple = compileSchema({ type: "array", prefixItems: [{ type: "string" }], items: false });
    expect(tuple.validate(["a"])).toEqual([]);
    expect(tuple.validate(["a", 2])).toHaveLength(1);
  });

  it("refuses an unsupported $schema", () => {
    expect(() => compileSchema({ $schema: "http://json-schema.org/draft-04/schema#" })).toThrow(/unsupported "\$schema"/);
  });

  it("checks formats", () => {
    const validator = compileSchema({ type: "object", properties: { to: { type: "string", format: "email" }, at: { format: "date-time" } } });
    expect(validator.validate({ to: "a@example.com", at: "2026-01-02T03:04:05Z" })).toEqual([]);
    expect(byPath(validator.validate({ to: "not an email", at: "yesterday" }))).toEqual([
      { path: "/at", message: 'must match format "date-time"' },
      { path: "/to", message: 'must match format "email"' },
    ]);
  });
});
