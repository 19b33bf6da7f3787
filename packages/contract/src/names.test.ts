import { describe, expect, it } from "vitest";
import {
  PLUGIN_ID_PATTERN,
  POSTGRES_SCHEMA_NAME_PATTERN,
  RESERVED_TOOL_NAMES,
  SEAM_KEY_PATTERN,
  TOOL_NAME_PATTERN,
  TOOL_PATTERN,
  camelCase,
  matchesToolPattern,
  parseToolFullName,
  pascalCase,
  pluginClientName,
  toolFullName,
} from "./names.js";

describe("names", () => {
  it("names a tool <pluginId>:<name>@<version> and parses it back", () => {
    expect(toolFullName("com.example.notes", "create-record", 2)).toBe("com.example.notes:create-record@2");
    expect(parseToolFullName("com.example.notes:create-record@2")).toEqual({ pluginId: "com.example.notes", tool: "create-record", version: 2 });
    for (const malformed of ["com.example.notes:create-record", "com.example.notes:create-record@0", "x@1", "a:b@1.5"]) {
      expect(parseToolFullName(malformed), malformed).toBeUndefined();
    }
  });

  it("accepts only lowercase single-hyphen tool names", () => {
    for (const good of ["a", "create-record", "v2-api", "a1-b2-c3"]) expect(TOOL_NAME_PATTERN.test(good), good).toBe(true);
    for (const bad of ["Not_Valid", "trailing-", "-leading", "double--hyphen", "1abc", "camelCase", ""]) {
      expect(TOOL_NAME_PATTERN.test(bad), bad).toBe(false);
    }
  });

  it("accepts dot-separated plugin ids", () => {
    expect(PLUGIN_ID_PATTERN.test("com.example.notes")).toBe(true);
    expect(PLUGIN_ID_PATTERN.test("com..notes")).toBe(false);
    expect(PLUGIN_ID_PATTERN.test("Com.example")).toBe(false);
  });

  it("reserves names whose camelCase shadows a built-in", () => {
    for (const name of ["then", "constructor", "to-string", "value-of", "has-own-property"]) {
      expect(RESERVED_TOOL_NAMES.has(name), name).toBe(true);
    }
    // Every built-in a client object (a plain object, a function, or anything awaited) carries, whose
    // kebab-case spelling is a valid tool name, is reserved.
    const builtIns = new Set([
      ...Object.getOwnPropertyNames(Object.prototype),
      ...Object.getOwnPropertyNames(Function.prototype),
      ...Object.getOwnPropertyNames(() => {}),
      "then",
      "catch",
      "finally",
    ]);
    const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    const expressible = [...builtIns].map(kebab).filter((name) => TOOL_NAME_PATTERN.test(name));
    expect(expressible.length).toBeGreaterThan(10);
    for (const name of expressible) expect(RESERVED_TOOL_NAMES.has(name), name).toBe(true);
  });

  it("derives client names", () => {
    expect(camelCase("create-record")).toBe("createRecord");
    expect(pascalCase("create-record")).toBe("CreateRecord");
    expect(pluginClientName({ id: "com.example.mail-er" })).toBe("mailEr");
    expect(pluginClientName({ id: "com.example.notes", alias: "n" })).toBe("n");
  });

  it("matches tool patterns", () => {
    expect(matchesToolPattern("*", "a.b", "t", 1)).toBe(true);
    expect(matchesToolPattern("a.b:*", "a.b", "t", 1)).toBe(true);
    expect(matchesToolPattern("a.b:*", "a.bc", "t", 1)).toBe(false);
    expect(matchesToolPattern("a.*", "a.b", "t", 1)).toBe(true);
    expect(matchesToolPattern("a.b:t", "a.b", "t", 3)).toBe(true);
    expect(matchesToolPattern("a.b:t@2", "a.b", "t", 2)).toBe(true);
    expect(matchesToolPattern("a.b:t@2", "a.b", "t", 1)).toBe(false);
    expect(matchesToolPattern("a.b:u", "a.b", "t", 1)).toBe(false);
    expect(matchesToolPattern("a.b", "a.b", "t", 1)).toBe(true);
    expect(matchesToolPattern("a.*", "a", "t", 1)).toBe(false);
    expect(matchesToolPattern("a.*:t@1", "a.b.c", "t", 1)).toBe(true);
    expect(matchesToolPattern("a.*:t@1", "ab.c", "t", 1)).toBe(false);
    // What is not a tool pattern matches nothing (every entry point refuses it first).
    for (const malformed of ["", "a.b:", "a.b:t@0", "A.b:*", "a.b:*@1", "a.b:t@2@2", "**"]) {
      expect(TOOL_PATTERN.test(malformed), malformed).toBe(false);
      expect(matchesToolPattern(malformed, "a.b", "t", 2), malformed).toBe(false);
    }
  });

  it("keeps the patterns' sources as editors see them in manifest.schema.json, and the derived ones", () => {
    expect(PLUGIN_ID_PATTERN.source).toBe(String.raw`^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)*$`);
    expect(TOOL_NAME_PATTERN.source).toBe(String.raw`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`);
    expect(TOOL_PATTERN.source).toBe(String.raw`^(\*|[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)*(\.\*)?(:(\*|[a-z][a-z0-9]*(-[a-z0-9]+)*(@[1-9][0-9]*)?))?)$`);
    expect(SEAM_KEY_PATTERN.test("com.example.mail-er:spam-check")).toBe(true);
    for (const bad of ["com.example", "com.example:*", "com.example:Check", ":check"]) expect(SEAM_KEY_PATTERN.test(bad), bad).toBe(false);
    for (const good of ["toolpact", "_t1", "a".repeat(63)]) expect(POSTGRES_SCHEMA_NAME_PATTERN.test(good), good).toBe(true);
    for (const bad of ["1t", "Tp", "a-b", "a".repeat(64), ""]) expect(POSTGRES_SCHEMA_NAME_PATTERN.test(bad), bad).toBe(false);
  });
});
