/**
 * MCP tool names for toolpact tools: `<provider id>_<tool>`, each part escaped so that a name is a
 * function of its tool alone. In the provider id `-` becomes `--` and `.` becomes `-`; in the tool name `-`
 * becomes `_`: `com.example.notes:create-record` is `com-example-notes_create_record`, and
 * `com.example-mailer:send` is `com-example--mailer_send`. The highest listed version of a tool has the
 * plain name; every version also has `<name>-v<n>` (listed for the others, accepted for the highest).
 *
 * Why this shape: the escaped id has no `_` and the escaped tool name no `-`, so the first `_` ends the
 * provider and `-v<n>` can only be a version: two different tools never get one name (injective), and since
 * a name depends on nothing else in the listing, adding or removing another provider or tool never renames
 * a tool, nor hands one tool's name to another (stable, over HTTP and stdio and across restarts). A name
 * longer than MCP's 128 characters is cut to 114 and ends in `-h` and 12 hex digits of the SHA-256 of the
 * whole name (a name that is not cut never ends that way). Names use only `[A-Za-z0-9_-]` (MCP allows `.`
 * too, but model APIs do not).
 */
import { createHash } from "node:crypto";
import { closestMatch, type ToolRef } from "@toolpact/contract";
import type { ToolListing } from "@toolpact/runtime";

/** MCP's rule for tool names (2025-11-25). */
export const MCP_TOOL_NAME_PATTERN = /^[a-zA-Z0-9_.-]{1,128}$/;
const MAX_NAME = 128;
const HASH_CHARS = 12;
const CUT_SUFFIX = "-h";

/** The tools one listing offers, by MCP name, in name order. */
export interface ToolDirectory {
  /** Listed names, sorted (code unit order); `tools/list` pages through them. */
  readonly names: readonly string[];
  /** The tool a name stands for: a listed name, or `<name>-v<n>` of the highest version. */
  resolve(name: string): ToolListing | undefined;
  /** The listed name of a tool. */
  nameOf(tool: ToolListing): string;
}

/** The MCP name of a tool without a version: the name of its highest listed version. */
export function mcpToolName(providerId: string, tool: string): string {
  return fitted(`${escapeProviderId(providerId)}_${tool.replaceAll("-", "_")}`);
}

/** The MCP name of one version of a tool, `<name>-v<n>`. */
export function mcpVersionedToolName(providerId: string, tool: string, version: number): string {
  return fitted(`${escapeProviderId(providerId)}_${tool.replaceAll("-", "_")}-v${version}`);
}

/**
 * The tool a name that is not cut stands for: provider id, tool and, for `<name>-v<n>`, the version; undefined
 * for any other name (a cut one included). Only a name that the tool's own name functions give back
 * decodes, so a decoded ref names exactly the tool a listing would name so (when the listing lists it).
 */
export function toolRefOfName(name: string): ToolRef | undefined {
  const split = name.indexOf("_");
  if (split < 0) return undefined;
  // The escaped tool name has no "-": one after the first "_" can only begin "-v<n>".
  const dash = name.indexOf("-", split);
  const providerId = name
    .slice(0, split)
    .split("--")
    .map((part) => part.replaceAll("-", "."))
    .join("-");
  const tool = name.slice(split + 1, dash < 0 ? undefined : dash).replaceAll("_", "-");
  const version = dash < 0 ? undefined : Number(name.slice(dash + "-v".length));
  if (version !== undefined && !(Number.isSafeInteger(version) && version > 0)) return undefined;
  // Decoding is lenient; encoding back keeps only the one spelling a tool's name functions give.
  const named = version === undefined ? mcpToolName(providerId, tool) : mcpVersionedToolName(providerId, tool, version);
  if (named !== name) return undefined;
  return version === undefined ? { providerId, tool } : { providerId, tool, version };
}

/** Names every tool of a listing (see the module comment for the rules). */
export function createToolDirectory(listing: readonly ToolListing[]): ToolDirectory {
  const highest = new Map<string, number>();
  for (const tool of listing) {
    const key = `${tool.providerId}:${tool.name}`;
    highest.set(key, Math.max(highest.get(key) ?? 0, tool.version));
  }
  const byName = new Map<string, ToolListing>();
  const nameOf = new Map<ToolListing, string>();
  const aliases = new Map<string, ToolListing>();
  for (const tool of listing) {
    const versioned = mcpVersionedToolName(tool.providerId, tool.name, tool.version);
    const isHighest = highest.get(`${tool.providerId}:${tool.name}`) === tool.version;
    const name = isHighest ? mcpToolName(tool.providerId, tool.name) : versioned;
    byName.set(name, tool);
    nameOf.set(tool, name);
    if (isHighest) aliases.set(versioned, tool);
  }
  let names: readonly string[] | undefined;
  return {
    // Sorted only for tools/list: a tools/call just resolves one name.
    get names() {
      return (names ??= [...byName.keys()].sort());
    },
    resolve: (name) => byName.get(name) ?? aliases.get(name),
    nameOf: (tool) => {
      const name = nameOf.get(tool);
      if (name === undefined) throw new Error(`${tool.fullName} is not part of this listing`);
      return name;
    },
  };
}

/**
 * The listed names closest to an unknown one, best first, at most three, for "did you mean": the closest
 * whole name, then names of the same tool (`notes_create_record` finds `com-example-notes_create_record`,
 * and so does the full toolpact name `com.example.notes:create-record@1`), then names of the closest tool.
 * Compared without case, `_`, `-` and `.`.
 */
export function similarNames(directory: ToolDirectory, name: string): string[] {
  const byFolded = new Map<string, string>();
  const byTool = new Map<string, string[]>();
  for (const candidate of directory.names) {
    byFolded.set(folded(candidate), candidate);
    const tool = folded(toolPartOf(candidate));
    byTool.set(tool, [...(byTool.get(tool) ?? []), candidate]);
  }
  const wantedTool = folded(toolPartOf(name));
  const closeTool = closestMatch(wantedTool, byTool.keys());
  const whole = closestMatch(folded(name), byFolded.keys());
  const found = [
    ...(whole === undefined ? [] : [byFolded.get(whole)!]),
    ...(byTool.get(wantedTool) ?? []),
    ...(closeTool === undefined ? [] : byTool.get(closeTool)!),
  ];
  return [...new Set(found)].filter((candidate) => candidate !== name).slice(0, 3);
}

/** The provider id with `-` doubled and `.` as `-`: no `_`, and decodable (an id segment never starts with `-`). */
function escapeProviderId(providerId: string): string {
  return providerId.replaceAll("-", "--").replaceAll(".", "-");
}

/** The tool part of an MCP name (after the first `_`), or of a full toolpact name (`<id>:<tool>@<n>`). */
function toolPartOf(name: string): string {
  const colon = name.indexOf(":");
  if (colon >= 0) return name.slice(colon + 1).replace(/@\d*$/, "");
  return name.slice(name.indexOf("_") + 1).replace(/-v\d+$/, "");
}

function folded(text: string): string {
  return text.toLowerCase().replace(/[-_.]/g, "");
}

/** The name itself when it fits in 128 characters, else its head, `-h` and a hash of the whole name. */
function fitted(name: string): string {
  if (name.length <= MAX_NAME) return name;
  const hash = createHash("sha256").update(name, "utf8").digest("hex").slice(0, HASH_CHARS);
  return `${name.slice(0, MAX_NAME - CUT_SUFFIX.length - HASH_CHARS)}${CUT_SUFFIX}${hash}`;
}
