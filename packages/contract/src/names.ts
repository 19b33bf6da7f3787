// The one home of every name pattern: the other packages import these (test/structure/contract-patterns.test.ts
// fails on a second definition). The patterns are built from the fragments below; their sources are what
// manifest.schema.json shows editors.
const PLUGIN_ID = String.raw`[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)*`;
const LOCAL_NAME = String.raw`[a-z][a-z0-9]*(-[a-z0-9]+)*`;
const VERSION = "[1-9][0-9]*";

/** Plugin ids: dot-separated lowercase segments, e.g. `com.example.notes`. */
export const PLUGIN_ID_PATTERN = new RegExp(`^${PLUGIN_ID}$`);
/** Longest plugin id. */
export const PLUGIN_ID_MAX_LENGTH = 128;

/** Tool, gate, hook and guard names: lowercase words joined by single hyphens, e.g. `create-record`. */
export const TOOL_NAME_PATTERN = new RegExp(`^${LOCAL_NAME}$`);
/** Longest tool, gate, hook or guard name. */
export const TOOL_NAME_MAX_LENGTH = 64;

/**
 * Tool patterns, as `appliesTo`, `uses`, policy rules, runs and recovery rules take them: `*`,
 * `<pluginId>:*`, `<pluginId>:<tool>`, `<pluginId>:<tool>@<version>`, and `com.example.*` for every plugin
 * under a prefix.
 */
export const TOOL_PATTERN = new RegExp(String.raw`^(\*|${PLUGIN_ID}(\.\*)?(:(\*|${LOCAL_NAME}(@${VERSION})?))?)$`);

/** A gate, hook or guard named with its plugin, `<pluginId>:<name>`, as policies key them. */
export const SEAM_KEY_PATTERN = new RegExp(`^${PLUGIN_ID}:${LOCAL_NAME}$`);

/** PostgreSQL schema names toolpact accepts: a plain lowercase identifier (at most 63), so it needs no quoting anywhere. */
export const POSTGRES_SCHEMA_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Names that, camelCased, would shadow a built-in on the generated client object
 * (`then` would make every client a thenable; `constructor`, `toString` ... break objects).
 */
export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set([
  "then",
  "catch",
  "finally",
  "constructor",
  "prototype",
  "proto",
  "to-string",
  "to-locale-string",
  "value-of",
  "has-own-property",
  "is-prototype-of",
  "property-is-enumerable",
  "define-getter",
  "define-setter",
  "lookup-getter",
  "lookup-setter",
  "to-json",
  "bind",
  "call",
  "apply",
  "length",
  "name",
  "arguments",
  "caller",
]);

/** `create-record` -> `createRecord`; `com.example.mail-er` last segment -> `mailEr`. */
export function camelCase(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `create-record` -> `CreateRecord`. */
export function pascalCase(name: string): string {
  const camel = camelCase(name);
  return camel.charAt(0).toUpperCase() + camel.slice(1);
}

/** The client name of a plugin: its alias, else the last id segment camelCased. */
export function pluginClientName(plugin: { readonly id: string; readonly alias?: string | undefined }): string {
  return plugin.alias ?? camelCase(plugin.id.slice(plugin.id.lastIndexOf(".") + 1));
}

/** A tool's full name, used everywhere: `<pluginId>:<name>@<version>`. */
export function toolFullName(pluginId: string, tool: string, version: number): string {
  return `${pluginId}:${tool}@${version}`;
}

/** Parses `<pluginId>:<name>@<version>`; undefined when malformed. */
export function parseToolFullName(full: string): { pluginId: string; tool: string; version: number } | undefined {
  const match = FULL_NAME.exec(full);
  if (!match) return undefined;
  return { pluginId: match[1]!, tool: match[2]!, version: Number(match[3]) };
}

/** Loose on the names (a stored full name is parsed as it was written), strict on the version. */
const FULL_NAME = new RegExp(`^([^:]+):([^@]+)@(${VERSION})$`);

/**
 * Does a tool pattern match a tool? Patterns: `*`, `com.example.notes:*`,
 * `com.example.notes:create-record`, `com.example.notes:create-record@2`, `com.example.*`.
 * A trailing `*` in either part matches by prefix (`com.example.notes:search-*`).
 */
export function matchesToolPattern(pattern: string, pluginId: string, tool: string, version: number): boolean {
  if (pattern === "*") return true;
  const at = pattern.lastIndexOf("@");
  const hasVersion = at > pattern.indexOf(":") && pattern.indexOf(":") >= 0;
  const base = hasVersion ? pattern.slice(0, at) : pattern;
  if (hasVersion && Number(pattern.slice(at + 1)) !== version) return false;
  const colon = base.indexOf(":");
  const pluginPart = colon < 0 ? base : base.slice(0, colon);
  const toolPart = colon < 0 ? "*" : base.slice(colon + 1);
  return globMatch(pluginPart, pluginId) && globMatch(toolPart, tool);
}

/** `*` alone matches anything; a trailing `*` matches by prefix; anything else matches itself. */
function globMatch(pattern: string, value: string): boolean {
  if (pattern === "*") return true;
  if (pattern.endsWith("*")) return value.startsWith(pattern.slice(0, -1));
  return pattern === value;
}
