import { RESERVED_TOOL_NAMES, TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN, camelCase } from "@toolpact/contract";
import { describe, expect, it } from "vitest";
import { importedNames, toolpactName } from "./tool-names.js";

describe("toolpactName", () => {
  it.each([
    ["read_text_file", "read-text-file"],
    ["createEntities", "create-entities"],
    ["getHTTPStatus", "get-http-status"],
    ["get-tiny-image", "get-tiny-image"],
    ["Search Files", "search-files"],
    ["git.status", "git-status"],
    ["__private__tool__", "private-tool"],
    ["résumé_créer", "resume-creer"],
    ["2fa-check", "tool-2fa-check"],
    ["___", "tool"],
    ["日本語", "tool"],
  ])("%s -> %s", (mcpName, name) => {
    expect(toolpactName(mcpName)).toBe(name);
    expect(name).toMatch(TOOL_NAME_PATTERN);
  });

  it("cuts a long name to the limit, never ending on a hyphen", () => {
    const name = toolpactName(`${"a".repeat(TOOL_NAME_MAX_LENGTH - 1)}_b`);
    expect(name).toBe("a".repeat(TOOL_NAME_MAX_LENGTH - 1));
  });
});

describe("importedNames", () => {
  it("resolves collisions (also once camelCased) and reserved names, and says why", () => {
    const names = importedNames(["read_file", "readFile", "read-file", "file-2", "file2", "then", "call", "toString"]);
    expect(names.map((entry) => entry.name)).toEqual([
      "read-file",
      "read-file-2",
      "read-file-3",
      "file-2",
      "file2-2",
      "then-tool",
      "call-tool",
      "to-string-tool",
    ]);
    expect(new Set(names.map((entry) => camelCase(entry.name))).size).toBe(names.length);
    expect(names.every((entry) => TOOL_NAME_PATTERN.test(entry.name) && !RESERVED_TOOL_NAMES.has(entry.name))).toBe(true);
    expect(names[1]!.notes).toEqual(['the server\'s "read_file" already became "read-file", so this one is "read-file-2"']);
    expect(names[4]!.notes).toEqual(['the server\'s "file-2" already became "file2", so this one is "file2-2"']);
    expect(names[5]!.notes).toEqual(['"then" is reserved (a JavaScript built-in on the generated client), so the name is "then-tool"']);
    expect(names[0]!.notes).toEqual([]);
  });

  it("notes a name cut to the limit, and keeps cut names apart", () => {
    const long = `${"very_long_".repeat(10)}`;
    const names = importedNames([`${long}a`, `${long}b`]);
    expect(names.map((entry) => entry.name.length <= TOOL_NAME_MAX_LENGTH)).toEqual([true, true]);
    expect(names[0]!.name).not.toBe(names[1]!.name);
    expect(names[0]!.notes).toEqual([`the name is cut to ${TOOL_NAME_MAX_LENGTH} characters`]);
  });
});
