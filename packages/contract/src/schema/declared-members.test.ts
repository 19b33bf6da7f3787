import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { prepareInput } from "../input.js";
import { compileSchema } from "../validation.js";
import { declaredMembersSource } from "./declared-members.js";

/** Property names that would be code if they ever reached the generated source. */
const HOSTILE = [
  '"); globalThis.pwned = 1; ("',
  "'); globalThis.pwned = 1; ('",
  "`${globalThis.pwned = 1}`",
  "*/ globalThis.pwned = 1; /*",
  "\u2028globalThis.pwned = 1;\u2029",
  "name0",
  "spec",
  "helpers",
  "__proto__",
  "constructor",
  "toString",
  "a/b~c",
];

/** Issues in path order: a schema is compiled from its canonical form, so members are visited by sorted name. */
const byPath = <T extends { path: string }>(issues: readonly T[]): T[] => [...issues].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

/** What generated source may be made of: identifiers, numbers, punctuation, and the two fixed strings. */
const SOURCE_ALPHABET = /^[A-Za-z0-9_ \n;,.=(){}[\]!&|<>+:?-]*$/;

describe("declared members as generated code", () => {
  it("generates source from the shape alone: fixed text and member numbers", () => {
    const shape = fc.array(fc.boolean(), { maxLength: 20 }).chain((required) => fc.record({ required: fc.constant(required), others: fc.boolean() }));
    fc.assert(
      fc.property(shape, ({ required, others }) => {
        const source = declaredMembersSource({ count: required.length, required, others });
        const strings = source.match(/"[^"]*"/g) ?? [];
        expect(strings.every((text) => text === '"use strict"' || text === '""')).toBe(true);
        expect(source.replace(/"use strict"|""/g, "")).toMatch(SOURCE_ALPHABET);
      }),
    );
    expect(() => declaredMembersSource({ count: 1.5, required: [true], others: false })).toThrow();
  });

  it("checks hostile property names as data: nothing runs, every name is found and reported", () => {
    const properties = Object.fromEntries(HOSTILE.map((name) => [name, { type: "string", pattern: "^[a-z]+$" }]));
    const validator = compileSchema({ type: "object", properties, required: HOSTILE, additionalProperties: false });
    const good = prepareInput(Object.fromEntries(HOSTILE.map((name) => [name, "ok"])));
    expect(validator.validate(good)).toEqual([]);
    const issues = validator.validate(prepareInput({ ...Object.fromEntries(HOSTILE.slice(1).map((name) => [name, "NOT OK"])), 'x"y': "z" }));
    expect(byPath(issues)).toEqual(
      byPath([
        { path: `/${HOSTILE[0]}`, message: `must have required property '${HOSTILE[0]}'` },
        ...HOSTILE.slice(1).map((name) => ({ path: `/${name.replace(/~/g, "~0").replace(/\//g, "~1")}`, message: 'must match pattern "^[a-z]+$"' })),
        { path: '/x"y', message: "must NOT have additional properties: 'x\"y'" },
      ]),
    );
    expect((globalThis as { pwned?: unknown }).pwned).toBeUndefined();
  });

  it("keeps hostile patterns as data too", () => {
    const pattern = '"); globalThis.pwned = 1; ("';
    const validator = compileSchema({ type: "object", properties: { [pattern]: { type: "string", pattern: `^${pattern.replace(/[()]/g, "\\$&")}$` } } });
    expect(validator.validate(prepareInput({ [pattern]: pattern }))).toEqual([]);
    expect(validator.validate(prepareInput({ [pattern]: "x" }))).toHaveLength(1);
    expect((globalThis as { pwned?: unknown }).pwned).toBeUndefined();
  });

  it("does not let a polluted prototype satisfy required or properties", () => {
    const validator = compileSchema({
      type: "object",
      properties: { admin: { const: false }, role: { type: "string" } },
      required: ["admin"],
      additionalProperties: false,
    });
    const polluted = Object.create({ admin: false, extra: 1 }) as Record<string, unknown>;
    polluted["role"] = "user";
    expect(validator.validate(polluted)).toEqual([{ path: "/admin", message: "must have required property 'admin'" }]);
  });

  it("checks objects with more members than it generates code for, as a loop", () => {
    const names = Array.from({ length: 200 }, (_, index) => `field${index}`);
    const validator = compileSchema({
      type: "object",
      properties: Object.fromEntries(names.map((name) => [name, { type: "integer" }])),
      required: names,
      additionalProperties: false,
    });
    expect(validator.validate(Object.fromEntries(names.map((name, index) => [name, index])))).toEqual([]);
    expect(byPath(validator.validate({ ...Object.fromEntries(names.slice(1).map((name) => [name, "x"])), more: 1 }))).toEqual(
      byPath([
        { path: "/field0", message: "must have required property 'field0'" },
        ...names.slice(1).map((name) => ({ path: `/${name}`, message: "must be integer" })),
        { path: "/more", message: "must NOT have additional properties: 'more'" },
      ]),
    );
  });

  it("answers the same where code generation is forbidden", () => {
    const script = `
      import { compileSchema } from "@toolpact/contract";
      const validator = compileSchema({ type: "object", properties: { a: { type: "string" }, b: { type: "integer" } }, required: ["a"], additionalProperties: false });
      console.log(JSON.stringify([validator.validate({ a: "x", b: 1 }), validator.validate({ b: "y", c: 1 })]));
      let generated = true;
      try { new Function("return 1"); } catch { generated = false; }
      console.log(generated);`;
    const output = execFileSync(process.execPath, ["--disallow-code-generation-from-strings", "--input-type=module", "-e", script], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      encoding: "utf8",
    });
    expect(output.trim().split("\n")).toEqual([
      JSON.stringify([
        [],
        [
          { path: "/a", message: "must have required property 'a'" },
          { path: "/b", message: "must be integer" },
          { path: "/c", message: "must NOT have additional properties: 'c'" },
        ],
      ]),
      "false",
    ]);
  });
});
