/**
 * MCP tool names for toolpact tools: `<provider alias>_<tool>`, the provider as generated clients name it
 * (`tools.notes`) and the tool in the snake case MCP tools customarily have, e.g. `notes_create_record`
 * for `com.example.notes:create-record`. The provider part is the provider's alias (its manifest's
 * `alias`, else its last id segment camelCased; the whole id camelCased when two listed providers share an
 * alias); the tool part is the tool name with `_` for `-`. The highest listed version has the plain name,
 * every other `-v<n>` (`notes_create_record-v1`). Names use only `[A-Za-z0-9_-]` (MCP allows `.` too, but
 * model APIs do not), are at most 128 characters, and depend only on what `tools.list` shows, so a name
 * means the same tool over HTTP and stdio, across restarts, and until a higher version is listed.
 */
import { createHash } from "node:crypto";
import { camelCase } from "@toolpact/contract";
import type { ToolListing } from "@toolpact/runtime";

/** MCP's rule for tool names (2025-11-25). */
export const MCP_TOOL_NAME_PATTERN = /^[a-zA-Z0-9_.-]{1,128}$/;
const MAX_NAME = 128;
const HASH_CHARS = 8;

/** The tools one listing offers, by MCP name, in name order. */
export interface ToolDirectory {
  /** Listed names, sorted (code unit order); `tools/list` pages through them. */
  readonly names: readonly string[];
  /** The tool a name stands for: a listed name, or `<name>-v<n>` of the highest version. */
  resolve(name: string): ToolListing | undefined;
  /** The listed name of a tool. */
  nameOf(tool: ToolListing): string;
}

/** Names every tool of a listing (see the module comment for the rules). */
export function createToolDirectory(listing: readonly ToolListing[]): ToolDirectory {
  const prefixes = providerPrefixes(listing);
  const highest = new Map<string, number>();
  for (const tool of listing) {
    const key = `${tool.providerId}:${tool.name}`;
    highest.set(key, Math.max(highest.get(key) ?? 0, tool.version));
  }
  const byName = new Map<string, ToolListing>();
  const nameOf = new Map<ToolListing, string>();
  const aliases = new Map<string, ToolListing>();
  // In full-name order, so that which of two colliding names gets the hash does not depend on the listing's order.
  for (const tool of [...listing].sort((a, b) => (a.fullName < b.fullName ? -1 : a.fullName > b.fullName ? 1 : 0))) {
    const base = `${prefixes.get(tool.providerId)}_${tool.name.replaceAll("-", "_")}`;
    const isHighest = highest.get(`${tool.providerId}:${tool.name}`) === tool.version;
    const name = fitted(isHighest ? base : `${base}-v${tool.version}`, tool.fullName);
    const unique = byName.has(name) ? fitted(`${name}-${hashOf(tool.fullName)}`, tool.fullName) : name;
    byName.set(unique, tool);
    nameOf.set(tool, unique);
    if (isHighest) aliases.set(fitted(`${base}-v${tool.version}`, tool.fullName), tool);
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
 * The listed names closest to an unknown one (same tool part, or same prefix), for "did you mean";
 * compared without case, `_`, `-` and `.`, so `notes_searchRecords` finds `notes_search_records`.
 */
export function similarNames(directory: ToolDirectory, name: string): string[] {
  const folded = (text: string) => text.toLowerCase().replace(/[-_.]/g, "");
  const wanted = folded(name);
  const tail = folded(name.slice(name.indexOf("_") + 1));
  return directory.names
    .filter((candidate) => {
      const other = folded(candidate);
      const method = folded(candidate.slice(candidate.indexOf("_") + 1));
      return other.includes(tail) || tail.includes(method) || other.startsWith(wanted);
    })
    .slice(0, 3);
}

/** Each listed provider's name prefix: its alias, or its whole id camelCased when another listed provider has the same alias. */
function providerPrefixes(listing: readonly ToolListing[]): Map<string, string> {
  const aliases = new Map<string, string>();
  for (const tool of listing) aliases.set(tool.providerId, tool.alias);
  const counts = new Map<string, number>();
  for (const alias of aliases.values()) counts.set(alias, (counts.get(alias) ?? 0) + 1);
  return new Map([...aliases].map(([id, alias]) => [id, counts.get(alias)! > 1 ? camelCase(id.replaceAll(".", "-")) : alias]));
}

/** The name itself when it fits in 128 characters, else its head and a hash of the tool's full name. */
function fitted(name: string, fullName: string): string {
  return name.length <= MAX_NAME ? name : `${name.slice(0, MAX_NAME - HASH_CHARS - 1)}-${hashOf(fullName)}`;
}

function hashOf(fullName: string): string {
  return createHash("sha256").update(fullName, "utf8").digest("hex").slice(0, HASH_CHARS);
}
