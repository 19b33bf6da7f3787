import { RESERVED_TOOL_NAMES, TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN, camelCase } from "@toolpact/contract";

/** A server's tool name made into a toolpact name, with what a reviewer should know about the change. */
export interface ImportedName {
  /** The toolpact name: lowercase words joined by single hyphens. */
  readonly name: string;
  /** Why the name is not simply the server's name in toolpact's form (a collision, a reserved word, a cut). */
  readonly notes: readonly string[];
}

/**
 * `read_text_file` -> `read-text-file`, `createEntities` -> `create-entities`, `getHTTPStatus` ->
 * `get-http-status`: words split at `_`, spaces, punctuation and camelCase, lowercased and joined by
 * single hyphens; letters with accents lose them; a name that starts with a digit gets `tool-` before it.
 */
export function toolpactName(mcpName: string): string {
  return cut(uncutName(mcpName), TOOL_NAME_MAX_LENGTH);
}

function uncutName(mcpName: string): string {
  const words = mcpName
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1-$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return /^[a-z]/.test(words) ? words : `tool-${words}`.replace(/-$/, "");
}

/**
 * Names for every tool of a server, in its order: each a valid toolpact name, none reserved, none the
 * same as another's (nor the same once camelCased, as the generated client names them).
 */
export function importedNames(mcpNames: readonly string[]): ImportedName[] {
  const taken = new Map<string, string>();
  return mcpNames.map((mcpName) => {
    const notes: string[] = [];
    const plain = toolpactName(mcpName);
    let base = plain;
    if (uncutName(mcpName).length > TOOL_NAME_MAX_LENGTH) {
      notes.push(`the name is cut to ${TOOL_NAME_MAX_LENGTH} characters`);
    }
    if (RESERVED_TOOL_NAMES.has(base)) {
      base = cut(`${base}-tool`, TOOL_NAME_MAX_LENGTH);
      notes.push(`${JSON.stringify(plain)} is reserved (a JavaScript built-in on the generated client), so the name is ${JSON.stringify(base)}`);
    }
    let name = base;
    for (let n = 2; taken.has(camelCase(name)); n++) name = withSuffix(base, `-${n}`);
    if (name !== base) {
      const other = taken.get(camelCase(base)) ?? "";
      notes.push(`the server's ${JSON.stringify(other)} already became ${JSON.stringify(base)}, so this one is ${JSON.stringify(name)}`);
    }
    if (!TOOL_NAME_PATTERN.test(name)) throw new Error(`internal: ${JSON.stringify(mcpName)} became ${JSON.stringify(name)}, not a tool name`);
    taken.set(camelCase(name), mcpName);
    return { name, notes };
  });
}

function withSuffix(name: string, suffix: string): string {
  return `${cut(name, TOOL_NAME_MAX_LENGTH - suffix.length)}${suffix}`;
}

/** At most `length` characters, never ending in a hyphen. */
function cut(name: string, length: number): string {
  return name.length <= length ? name : name.slice(0, length).replace(/-+$/, "");
}
