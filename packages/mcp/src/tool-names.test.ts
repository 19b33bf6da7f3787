import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PLUGIN_ID_MAX_LENGTH, PLUGIN_ID_PATTERN, TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN } from "@toolpact/contract";
import type { ToolListing } from "@toolpact/runtime";
import type { ToolBackend } from "./tool-backend.js";
import { createToolLookup } from "./tool-lookup.js";
import { MCP_TOOL_NAME_PATTERN, createToolDirectory, mcpToolName, mcpVersionedToolName, similarNames, toolRefOfName } from "./tool-names.js";

/** A listed tool, as the runtime lists it. */
function tool(providerId: string, name: string, version = 1): ToolListing {
  return {
    providerId,
    alias: providerId.slice(providerId.lastIndexOf(".") + 1),
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
  it("are <provider id with . as - and - as -->_<tool with _ for ->, sorted", () => {
    const directory = createToolDirectory([tool("com.example.notes", "search-records"), tool("com.example.mail-er", "send-summary")]);
    expect(directory.names).toEqual(["com-example-mail--er_send_summary", "com-example-notes_search_records"]);
    expect(directory.resolve("com-example-notes_search_records")?.fullName).toBe("com.example.notes:search-records@1");
  });

  it("tell apart providers whose ids differ only in . and - (the names of neither move to the other)", () => {
    const dashed = tool("com.example-mailer", "send");
    const dotted = tool("com.example.mailer", "send");
    const both = createToolDirectory([dashed, dotted]);
    expect(both.names).toEqual(["com-example--mailer_send", "com-example-mailer_send"]);
    expect(both.resolve("com-example--mailer_send")).toBe(dashed);
    expect(both.resolve("com-example-mailer_send")).toBe(dotted);
    // Alone, each keeps its name, and the other's name means nothing.
    expect(createToolDirectory([dotted]).names).toEqual(["com-example-mailer_send"]);
    expect(createToolDirectory([dashed]).resolve("com-example-mailer_send")).toBeUndefined();
  });

  it("give the highest listed version the plain name and every other -v<n>; -v<n> of the highest resolves too", () => {
    const v1 = tool("com.example.notes", "create-record", 1);
    const v2 = tool("com.example.notes", "create-record", 2);
    const directory = createToolDirectory([v1, v2]);
    expect(directory.names).toEqual(["com-example-notes_create_record", "com-example-notes_create_record-v1"]);
    expect(directory.resolve("com-example-notes_create_record")).toBe(v2);
    expect(directory.resolve("com-example-notes_create_record-v1")).toBe(v1);
    expect(directory.resolve("com-example-notes_create_record-v2")).toBe(v2);
    expect(directory.resolve("com-example-notes_create_record-v3")).toBeUndefined();
    expect(directory.nameOf(v1)).toBe("com-example-notes_create_record-v1");
  });

  it("keep a tool named like another's version apart from that version", () => {
    const directory = createToolDirectory([
      tool("com.a.notes", "create-record", 1),
      tool("com.a.notes", "create-record", 2),
      tool("com.a.notes", "create-record-v1"),
    ]);
    expect(new Set(directory.names).size).toBe(3);
    expect(directory.resolve("com-a-notes_create_record-v1")?.fullName).toBe("com.a.notes:create-record@1");
    expect(directory.resolve("com-a-notes_create_record_v1")?.fullName).toBe("com.a.notes:create-record-v1@1");
  });

  it("cut a name past 128 characters and end it in -h and a hash of the whole name", () => {
    const longId = `com.${"a".repeat(60)}.${"b".repeat(60)}`;
    const name = `${"c".repeat(40)}-${"d".repeat(23)}`;
    const long = [tool(longId, name, 1), tool(longId, name, 2)];
    const directory = createToolDirectory(long);
    for (const listed of directory.names) {
      expect(listed).toMatch(/^[A-Za-z0-9_-]{128}$/);
      expect(listed).toMatch(/-h[0-9a-f]{12}$/);
    }
    expect(new Set(directory.names).size).toBe(2);
    expect(directory.resolve(mcpToolName(longId, name))).toBe(long[1]);
    expect(directory.resolve(mcpVersionedToolName(longId, name, 1))).toBe(long[0]);
  });

  it("suggest listed names close to an unknown one: the closest, the same tool, a close tool", () => {
    const directory = createToolDirectory([
      tool("com.example.notes", "search-records"),
      tool("com.example.notes", "create-record"),
      tool("com.example.mailer", "send-summary"),
    ]);
    expect(similarNames(directory, "com-example-notes_search_record")).toEqual(["com-example-notes_search_records"]);
    expect(similarNames(directory, "notes_search_records")).toEqual(["com-example-notes_search_records"]);
    expect(similarNames(directory, "notes_searchRecords")).toEqual(["com-example-notes_search_records"]);
    expect(similarNames(directory, "com.example.notes:create-record@1")).toEqual(["com-example-notes_create_record"]);
    expect(similarNames(directory, "mailer_send_sumary")).toEqual(["com-example-mailer_send_summary"]);
    expect(similarNames(directory, "nothing-like-it")).toEqual([]);
  });
});

// Small alphabets, so that random ids and names often differ only in "." against "-", or by one letter.
const segment = fc
  .tuple(fc.constantFrom("a", "b"), fc.array(fc.constantFrom("a", "b", "1", "-"), { maxLength: 4 }))
  .map(([head, rest]) => head + rest.join(""));
const shortId = fc.array(segment, { minLength: 1, maxLength: 3 }).map((segments) => segments.join("."));
// Ids near the length limit, so that names get cut.
const longId = fc.tuple(shortId, fc.integer({ min: 100, max: 120 })).map(([id, length]) => `${id}.${"c".repeat(length)}`.slice(0, PLUGIN_ID_MAX_LENGTH));
const providerId = fc.oneof({ weight: 4, arbitrary: shortId }, { weight: 1, arbitrary: longId }).filter((id) => PLUGIN_ID_PATTERN.test(id));
const word = fc.tuple(fc.constantFrom("a", "b"), fc.array(fc.constantFrom("a", "b", "1"), { maxLength: 3 })).map(([head, rest]) => head + rest.join(""));
const toolName = fc
  .tuple(fc.array(word, { minLength: 1, maxLength: 3 }), fc.boolean())
  .map(([words, versionLike]) => (versionLike ? [...words, "v1"] : words).join("-"))
  .filter((name) => TOOL_NAME_PATTERN.test(name) && name.length <= TOOL_NAME_MAX_LENGTH);
const listedTool = fc.tuple(providerId, toolName, fc.integer({ min: 1, max: 3 })).map(([id, name, version]) => tool(id, name, version));
/** The same tool name under an id with one "." and "-" swapped: what collided before names were escaped. */
function twinOf(listed: ToolListing, at: number): ToolListing | undefined {
  const marks = [...listed.providerId].flatMap((char, index) => (char === "." || char === "-" ? [index] : []));
  if (marks.length === 0) return undefined;
  const index = marks[at % marks.length]!;
  const id = listed.providerId.slice(0, index) + (listed.providerId[index] === "." ? "-" : ".") + listed.providerId.slice(index + 1);
  return PLUGIN_ID_PATTERN.test(id) ? tool(id, listed.name, listed.version) : undefined;
}
/** Tools a server may list (twins among them), no full name twice; listings drawn from it share some of them. */
const universe = fc
  .array(fc.tuple(listedTool, fc.boolean(), fc.nat()), { minLength: 1, maxLength: 8 })
  .map((drawn) => drawn.flatMap(([listed, twin, at]) => [listed, ...(twin ? [twinOf(listed, at)].filter((found) => found !== undefined) : [])]))
  .map((tools) => [...new Map(tools.map((listed) => [listed.fullName, listed])).values()]);
const twoListings = universe.chain((tools) =>
  fc.tuple(fc.subarray(tools), fc.subarray(tools), fc.shuffledSubarray(tools)).map(([first, second, third]) => ({ first, second, third })),
);
const sameTool = (a: ToolListing, b: ToolListing) => a.providerId === b.providerId && a.name === b.name;

describe("MCP tool names, over random provider ids and tool names", () => {
  it("are injective: every listed tool has a name of its own, MCP-valid, that resolves to it", () => {
    fc.assert(
      fc.property(universe, (tools) => {
        const directory = createToolDirectory(tools);
        expect(directory.names).toHaveLength(tools.length);
        for (const listed of tools) {
          const name = directory.nameOf(listed);
          expect(name).toMatch(MCP_TOOL_NAME_PATTERN);
          expect(name).toMatch(/^[A-Za-z0-9_-]+$/);
          expect(directory.resolve(name)).toBe(listed);
          expect(directory.resolve(mcpVersionedToolName(listed.providerId, listed.name, listed.version))).toBe(listed);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("are stable: a name never stands for another provider's tool or another tool in any other listing", () => {
    fc.assert(
      fc.property(twoListings, ({ first, second, third }) => {
        const directories = [createToolDirectory(first), createToolDirectory(second), createToolDirectory(third)];
        const names = new Set(directories.flatMap((directory) => directory.names));
        for (const tools of [first, second, third]) {
          for (const listed of tools) {
            names.add(mcpToolName(listed.providerId, listed.name));
            names.add(mcpVersionedToolName(listed.providerId, listed.name, listed.version));
          }
        }
        for (const name of names) {
          const meant = directories.map((directory) => directory.resolve(name)).filter((found) => found !== undefined);
          for (const other of meant) {
            expect(sameTool(other, meant[0]!), `${name}: ${meant[0]!.fullName} and ${other.fullName}`).toBe(true);
            // A -v<n> name means one version; only the plain name moves, to a higher version of the same tool.
            if (name !== mcpToolName(other.providerId, other.name)) expect(other.version).toBe(meant[0]!.version);
          }
        }
        // A tool listed in two listings, highest in both or in neither, has one name in both.
        for (const listed of first.filter((candidate) => second.includes(candidate))) {
          const [a, b] = [directories[0]!.nameOf(listed), directories[1]!.nameOf(listed)];
          const plain = mcpToolName(listed.providerId, listed.name);
          if ((a === plain) === (b === plain)) expect(a).toBe(b);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("decode back to their tool, so one tool looked up answers what the whole listing does", async () => {
    await fc.assert(
      fc.asyncProperty(twoListings, async ({ first, second }) => {
        for (const listed of [...first, ...second]) {
          for (const version of [undefined, listed.version]) {
            const name = version === undefined ? mcpToolName(listed.providerId, listed.name) : mcpVersionedToolName(listed.providerId, listed.name, version);
            const ref = toolRefOfName(name);
            // Only a cut name does not decode.
            if (ref === undefined) expect(name).toMatch(/^.{114}-h[0-9a-f]{12}$/);
            else
              expect(ref).toEqual(
                version === undefined ? { providerId: listed.providerId, tool: listed.name } : { providerId: listed.providerId, tool: listed.name, version },
              );
          }
        }
        const directory = createToolDirectory(first);
        const lookup = createToolLookup(listedBackend(first));
        const others = createToolDirectory(second).names;
        const names = [...directory.names, ...others, ...[...directory.names, ...others].flatMap((name) => [`${name}-v1`, `${name}-v3`, name.slice(1)])];
        for (const name of names) expect(await lookup.find(name), name).toBe(directory.resolve(name));
      }),
      { numRuns: 200 },
    );
  });

  it("do not depend on the listing's order", () => {
    fc.assert(
      fc.property(twoListings, ({ third }) => {
        expect(createToolDirectory([...third].reverse()).names).toEqual(createToolDirectory(third).names);
      }),
      { numRuns: 100 },
    );
  });
});

/** A backend over a fixed listing that looks one tool up as the runtime does: the version asked for, else the highest listed. */
function listedBackend(listing: readonly ToolListing[]): ToolBackend {
  const unused = () => Promise.reject(new Error("only listing and lookup are used here"));
  return {
    listTools: async () => listing,
    findTool: async (ref) =>
      listing
        .filter((listed) => listed.providerId === ref.providerId && listed.name === ref.tool && (ref.version === undefined || listed.version === ref.version))
        .sort((a, b) => b.version - a.version)[0],
    caller: unused,
    preview: unused,
    execute: unused,
    waitConfirmation: unused,
    cancelConfirmation: unused,
  };
}
