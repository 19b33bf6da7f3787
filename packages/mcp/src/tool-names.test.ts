import { describe, expect, it } from "vitest";
import type { ToolListing } from "@toolpact/runtime";
import { MCP_TOOL_NAME_PATTERN, createToolDirectory, similarNames } from "./tool-names.js";

/** A listed tool; the alias is the last id segment camelCased unless given (as the runtime lists it). */
function tool(providerId: string, name: string, version = 1, alias?: string): ToolListing {
  const segment = providerId.slice(providerId.lastIndexOf(".") + 1);
  return {
    providerId,
    alias: alias ?? segment.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase()),
    name,
    version,
    fullName: `${providerId}:${name}@${version}`,
    effect: "read",
    requiresConfirmation: false,
    minVerificationLevel: 0,
    inputSchema: { type: "object" },
  };
}

describe("MCP tool names", () => {
  it("are <provider alias>_<tool with _ for ->, sorted", () => {
    const directory = createToolDirectory([tool("com.example.notes", "search-records"), tool("com.example.mail-er", "send-summary")]);
    expect(directory.names).toEqual(["mailEr_send_summary", "notes_search_records"]);
    expect(directory.resolve("notes_search_records")?.fullName).toBe("com.example.notes:search-records@1");
  });

  it("use the provider's alias from its manifest", () => {
    const directory = createToolDirectory([tool("com.example.notes-service", "search-records", 1, "notes")]);
    expect(directory.names).toEqual(["notes_search_records"]);
  });

  it("give the highest listed version the plain name and every other -v<n>; -v<n> of the highest resolves too", () => {
    const v1 = tool("com.example.notes", "create-record", 1);
    const v2 = tool("com.example.notes", "create-record", 2);
    const directory = createToolDirectory([v1, v2]);
    expect(directory.names).toEqual(["notes_create_record", "notes_create_record-v1"]);
    expect(directory.resolve("notes_create_record")).toBe(v2);
    expect(directory.resolve("notes_create_record-v1")).toBe(v1);
    expect(directory.resolve("notes_create_record-v2")).toBe(v2);
    expect(directory.resolve("notes_create_record-v3")).toBeUndefined();
    expect(directory.nameOf(v1)).toBe("notes_create_record-v1");
  });

  it("stay the same whatever order the listing comes in, collisions included", () => {
    const tools = [tool("com.a.notes", "x", 1), tool("com.a.notes", "x", 2), tool("com.b.mail", "y"), tool("com.c.mail", "y", 1, "mail")];
    const names = createToolDirectory(tools).names;
    expect(createToolDirectory([...tools].reverse()).names).toEqual(names);
    expect(new Set(names).size).toBe(4);
  });

  it("use the whole id when two listed providers share an alias", () => {
    const directory = createToolDirectory([tool("com.acme.notes", "list"), tool("org.other.notes", "list"), tool("com.acme.mail", "send")]);
    expect(directory.names).toEqual(["comAcmeNotes_list", "mail_send", "orgOtherNotes_list"]);
  });

  it("fit MCP's rule and model APIs' charset, shortening long names with a hash of the full name", () => {
    const longId = `com.${"a".repeat(60)}.${"b".repeat(60)}`;
    const long = [tool(longId, `${"c".repeat(40)}-${"d".repeat(23)}`, 1), tool(longId, `${"c".repeat(40)}-${"d".repeat(23)}`, 2)];
    const directory = createToolDirectory(long);
    for (const name of directory.names) {
      expect(name).toMatch(MCP_TOOL_NAME_PATTERN);
      expect(name).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(name.length).toBeLessThanOrEqual(128);
    }
    expect(new Set(directory.names).size).toBe(2);
    expect(directory.names.map((name) => directory.resolve(name))).toEqual([...long].reverse());
  });

  it("suggest listed names close to an unknown one, whatever its case or separators", () => {
    const directory = createToolDirectory([tool("com.example.notes", "search-records"), tool("com.example.notes", "create-record")]);
    expect(similarNames(directory, "notes_search_record")).toEqual(["notes_search_records"]);
    expect(similarNames(directory, "notes_searchRecords")).toEqual(["notes_search_records"]);
    expect(similarNames(directory, "nothing-like-it")).toEqual([]);
  });
});
