import { describe, expect, it } from "vitest";
import { ToolpactError } from "@toolpact/protocol";
import { canonicalJson, inputDigest, schemaHash } from "./canonical-json.js";
import { DEFAULT_INPUT_LIMITS, DEFAULT_OUTPUT_LIMITS, prepareInput, prepareOutput } from "./input.js";

const KEY = new Uint8Array(32).fill(7);
const OTHER_KEY = new Uint8Array(32).fill(8);

function invalidIssues(run: () => unknown): readonly { path: string; message: string }[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ToolpactError);
    const toolpact = error as ToolpactError;
    expect(toolpact.code).toBe("INPUT_INVALID");
    expect(toolpact.data.issues?.length).toBeGreaterThan(0);
    return toolpact.data.issues!;
  }
  throw new Error("expected INPUT_INVALID");
}

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let level = 0; level < depth; level++) value = { a: value };
  return value;
}

function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen);
}

describe("inputDigest", () => {
  it("is the same for {a:1,b:2} and {b:2,a:1}", () => {
    expect(inputDigest(KEY, { a: 1, b: 2 })).toBe(inputDigest(KEY, { b: 2, a: 1 }));
  });

  it("differs for {a:1} and {a:'1'}", () => {
    expect(inputDigest(KEY, { a: 1 })).not.toBe(inputDigest(KEY, { a: "1" }));
  });

  it("differs under another key", () => {
    expect(inputDigest(KEY, { a: 1 })).not.toBe(inputDigest(OTHER_KEY, { a: 1 }));
  });

  it("is base64url of a 32-byte HMAC", () => {
    expect(inputDigest(KEY, { a: 1 })).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("ignores nested key order but not array order", () => {
    expect(inputDigest(KEY, { x: { b: [1, 2], a: null } })).toBe(inputDigest(KEY, { x: { a: null, b: [1, 2] } }));
    expect(inputDigest(KEY, { x: [1, 2] })).not.toBe(inputDigest(KEY, { x: [2, 1] }));
  });

  it("refuses what is not JSON", () => {
    invalidIssues(() => inputDigest(KEY, { a: 1n }));
  });
});

describe("canonicalJson (RFC 8785)", () => {
  it("matches the RFC's own example", () => {
    const value = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
        ' "literals": [null, true, false]}',
    ) as unknown;
    expect(canonicalJson(value)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' + '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it("sorts keys by UTF-16 code units, as the RFC's sorting example", () => {
    const value = {
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis",
    };
    const keys = Object.keys(JSON.parse(canonicalJson(value)) as object);
    // JSON.parse puts the integer-like key "1" first; compare the text order instead.
    const order = [...canonicalJson(value).matchAll(/"([^"]*)":"[^"]*"/g)].map((match) => match[1]);
    expect(order).toEqual(["\\r", "1", "\u0080", "\u00f6", "\u20ac", "\ud83d\ude00", "\ufb33"]);
    expect(keys).toHaveLength(7);
  });

  it("formats numbers as ECMAScript does", () => {
    expect(canonicalJson([-0, 1e21, 1e-7, 0.000001, 123456789012345680000, 5e-324, 1.7976931348623157e308])).toBe(
      "[0,1e+21,1e-7,0.000001,123456789012345680000,5e-324,1.7976931348623157e+308]",
    );
  });

  it("escapes minimally", () => {
    expect(canonicalJson('\u0000\b\t\n\f\r\u001f\u007f/é"\\')).toBe('"\\u0000\\b\\t\\n\\f\\r\\u001f\u007f/é\\"\\\\"');
  });

  it("drops undefined members and refuses everything else that is not JSON", () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(invalidIssues(() => canonicalJson({ a: [1, undefined], b: NaN, c: () => 1 }))).toEqual([
      { path: "/a/1", message: "must be JSON: undefined is not allowed inside arrays; use null" },
      { path: "/b", message: "must be a finite number: got NaN" },
      { path: "/c", message: "must be JSON: got a function" },
    ]);
  });

  it("refuses lone surrogates, which have no canonical UTF-8 form", () => {
    expect(invalidIssues(() => canonicalJson({ s: "a\ud800b" }))[0]?.path).toBe("/s");
    expect(invalidIssues(() => canonicalJson({ "\udc00": 1 }))[0]?.message).toMatch(/lone UTF-16 surrogate/);
    expect(canonicalJson("\ud83d\ude00")).toBe('"\ud83d\ude00"');
  });
});

describe("canonicalJson limits", () => {
  it("refuses absurd nesting with INPUT_INVALID instead of overflowing the stack", () => {
    expect(() => canonicalJson(nested(1_000))).not.toThrow();
    expect(invalidIssues(() => canonicalJson(nested(50_000)))[0]?.message).toBe("input is nested more than 1000 levels deep; flatten it");
  });
});

describe("schemaHash", () => {
  it("is the sha256 hex of the canonical form, independent of key order", () => {
    const a = schemaHash({ type: "object", properties: { x: { type: "string" } } });
    const b = schemaHash({ properties: { x: { type: "string" } }, type: "object" });
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).toBe(b);
    expect(schemaHash({ type: "object", properties: { x: { type: "number" } } })).not.toBe(a);
  });
});

describe("prepareInput", () => {
  it("returns a deep-frozen copy that later changes to the source do not reach", () => {
    const source = { title: "Q3", tags: ["a", "b"], meta: { n: 1 } };
    const copy = prepareInput(source) as typeof source;
    expect(copy).toEqual(source);
    expect(copy).not.toBe(source);
    expect(copy.tags).not.toBe(source.tags);
    expect(isDeepFrozen(copy)).toBe(true);
    source.tags.push("c");
    source.meta.n = 2;
    expect(copy).toEqual({ title: "Q3", tags: ["a", "b"], meta: { n: 1 } });
    expect(() => {
      (copy.tags as string[]).push("x");
    }).toThrow(TypeError);
  });

  it("produces plain objects and arrays", () => {
    const copy = prepareInput({ a: [{ b: 1 }] }) as { a: { b: number }[] };
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Array.isArray(copy.a)).toBe(true);
    expect(Object.getPrototypeOf(copy.a[0])).toBe(Object.prototype);
  });

  it("accepts null-prototype objects and shared (non-cyclic) references", () => {
    const shared = { x: 1 };
    const bare = Object.assign(Object.create(null) as object, { k: "v" });
    expect(prepareInput({ one: shared, two: shared, bare })).toEqual({ one: { x: 1 }, two: { x: 1 }, bare: { k: "v" } });
  });

  it("drops members whose value is undefined, like JSON", () => {
    expect(Object.keys(prepareInput({ a: undefined, b: 1 }) as object)).toEqual(["b"]);
  });

  it("turns -0 into 0", () => {
    expect(Object.is((prepareInput({ n: -0 }) as { n: number }).n, 0)).toBe(true);
  });

  it("keeps a __proto__ key as data without touching any prototype", () => {
    const source = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const copy = prepareInput(source) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.hasOwn(copy, "__proto__")).toBe(true);
    expect(Object.keys(copy)).toEqual(["__proto__", "a"]);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
    expect(canonicalJson(copy)).toBe('{"__proto__":{"polluted":true},"a":1}');
  });

  it.each([
    ["a BigInt", { n: 10n }, "/n", "must be JSON: got a BigInt; send it as a string or a number"],
    ["a function", { f: () => 1 }, "/f", "must be JSON: got a function"],
    ["a symbol", { s: Symbol("x") }, "/s", "must be JSON: got a symbol"],
    ["undefined inside an array", { list: [1, undefined] }, "/list/1", "must be JSON: undefined is not allowed inside arrays; use null"],
    // biome-ignore lint/suspicious/noSparseArray: the hole is what this case is about
    ["a hole in an array", { list: [1, , 3] }, "/list/1", "must be JSON: arrays must not have holes"],
    ["NaN", { n: Number.NaN }, "/n", "must be a finite number: got NaN"],
    ["Infinity", { n: Number.POSITIVE_INFINITY }, "/n", "must be a finite number: got Infinity"],
    ["-Infinity", [Number.NEGATIVE_INFINITY], "/0", "must be a finite number: got -Infinity"],
    ["a Date", { d: new Date(0) }, "/d", "must be JSON: got a Date, which is not a plain object"],
    ["a Map", { m: new Map() }, "/m", "must be JSON: got a Map, which is not a plain object"],
    [
      "a class instance",
      {
        c: new (class Point {
          x = 1;
        })(),
      },
      "/c",
      "must be JSON: got a Point, which is not a plain object",
    ],
    ["a typed array", { t: new Uint8Array(2) }, "/t", "must be JSON: got a Uint8Array, which is not a plain object"],
    ["a symbol key", { [Symbol("k")]: 1 }, "", "must be JSON: the object has symbol-keyed properties"],
    ["undefined at the root", undefined, "", "must be JSON: got undefined"],
  ])("refuses %s as INPUT_INVALID", (_name, value, path, message) => {
    expect(invalidIssues(() => prepareInput(value))).toEqual([{ path, message }]);
  });

  it("refuses a cycle instead of recursing forever", () => {
    const cyclic: Record<string, unknown> = { a: { b: [] } };
    (cyclic["a"] as { b: unknown[] }).b.push(cyclic);
    expect(invalidIssues(() => prepareInput(cyclic))).toEqual([{ path: "/a/b/0", message: "must not contain a cycle: this value contains itself" }]);
  });

  it("reports every problem, with JSON Pointer paths (escaped)", () => {
    const issues = invalidIssues(() => prepareInput({ "a/b": 1n, "c~d": [Number.NaN], ok: 1 }));
    expect(issues.map((issue) => issue.path)).toEqual(["/a~1b", "/c~0d/0"]);
  });

  it("turns a throwing getter into INPUT_INVALID, not a crash", () => {
    const tricky = {
      get boom(): never {
        throw new Error("nope");
      },
    };
    expect(invalidIssues(() => prepareInput(tricky))).toEqual([{ path: "/boom", message: "could not be read as JSON: nope" }]);
  });

  it("reads a getter once and keeps that value", () => {
    let reads = 0;
    const source = {
      get n(): number {
        reads++;
        return reads;
      },
    };
    const copy = prepareInput(source) as { n: number };
    expect(copy.n).toBe(1);
    expect(copy.n).toBe(1);
    expect(reads).toBe(1);
  });

  it("limits nesting depth: 64 levels pass, 65 do not", () => {
    expect(DEFAULT_INPUT_LIMITS.maxDepth).toBe(64);
    expect(() => prepareInput(nested(64))).not.toThrow();
    const issues = invalidIssues(() => prepareInput(nested(65)));
    expect(issues[0]?.message).toBe("input is nested more than 64 levels deep; flatten it");
  });

  it("limits size in bytes of canonical JSON, counting exactly", () => {
    expect(DEFAULT_INPUT_LIMITS.maxBytes).toBe(1024 * 1024);
    const value = { text: "é".repeat(10), list: [1, true, null, "a\nb"], nested: { k: -1.5 } };
    const exact = Buffer.byteLength(canonicalJson(value));
    expect(() => prepareInput(value, { maxBytes: exact, maxDepth: 8 })).not.toThrow();
    const issues = invalidIssues(() => prepareInput(value, { maxBytes: exact - 1, maxDepth: 8 }));
    expect(issues[0]?.message).toBe(`input is larger than ${exact - 1} bytes of canonical JSON; send less data`);
  });

  it("stops early on a huge input: it reads about as much as the limit allows, not the whole input", () => {
    let reads = 0;
    const items = new Proxy(new Array(200_000).fill("x".repeat(20)) as string[], {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const issues = invalidIssues(() => prepareInput({ items }, { maxBytes: 10_000, maxDepth: 8 }));
    expect(issues[0]?.message).toBe("input is larger than 10000 bytes of canonical JSON; send less data");
    // 10,000 bytes hold about 450 of these 22-byte items (the commas alone pass the limit first): never 200,000 reads.
    expect(reads).toBeLessThan(2_000);
  });

  it("bounds a reference bomb (shared references that expand exponentially) by size", () => {
    let bomb: unknown = ["x"];
    for (let level = 0; level < 40; level++) bomb = [bomb, bomb];
    const issues = invalidIssues(() => prepareInput(bomb));
    expect(issues[0]?.message).toMatch(/larger than 1048576 bytes/);
  });
});

describe("prepareOutput", () => {
  it("copies into frozen plain data: a later change to the source changes nothing", () => {
    const source = { text: "nothing to see", list: [{ a: 1 }] } as Record<string, unknown>;
    const copy = prepareOutput(source) as { text: string; list: { a: number }[] };
    (source as { text: string }).text = "secret: bob@example.com";
    (source.list as { a: number }[])[0]!.a = 2;
    (source.list as unknown[]).push("extra");
    expect(copy).toEqual({ text: "nothing to see", list: [{ a: 1 }] });
    expect(isDeepFrozen(copy)).toBe(true);
    expect(() => {
      (copy as { text: string }).text = "changed";
    }).toThrow(TypeError);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
  });

  it("refuses what is not JSON as OUTPUT_INVALID, with every issue", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = cyclic;
    for (const [value, path] of [
      [{ d: new Date(0) }, "/d"],
      [{ n: Number.NaN }, "/n"],
      [{ f: () => 1 }, "/f"],
      [cyclic, "/self"],
      [
        {
          get boom(): never {
            throw new Error("provider detail");
          },
        },
        "/boom",
      ],
    ] as const) {
      let caught: unknown;
      try {
        prepareOutput(value);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ToolpactError);
      expect((caught as ToolpactError).code).toBe("OUTPUT_INVALID");
      expect((caught as ToolpactError).data.issues?.[0]?.path).toBe(path);
    }
  });

  it("bounds a reference bomb by size, and depth, with output in the message", () => {
    expect(DEFAULT_OUTPUT_LIMITS).toEqual({ maxBytes: 16 * 1024 * 1024, maxDepth: 1000 });
    let bomb: unknown = ["x"];
    for (let level = 0; level < 40; level++) bomb = [bomb, bomb];
    const started = performance.now();
    expect(() => prepareOutput(bomb)).toThrow(/^output is not valid JSON at \/0\/\S+: output is larger than 16777216 bytes/);
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(() => prepareOutput(bomb, { maxBytes: 1000, maxDepth: 64 })).toThrow(/larger than 1000 bytes/);
    expect(() => prepareOutput(nested(1000))).not.toThrow();
    expect(() => prepareOutput(nested(1001))).toThrow(/output is nested more than 1000 levels deep/);
  });
});
