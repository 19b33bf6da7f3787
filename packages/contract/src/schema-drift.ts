/**
 * Drift between a manifest and the MCP server that provides its tools: each declared tool must exist
 * upstream (under its `upstreamName`) with the same input schema, and the same output schema when the
 * manifest declares one, compared as canonical JSON. The host refuses a drifted tool at load;
 * `toolpact import mcp` and `diff` can show the same report.
 */
import { canonicalJson } from "./canonical-json.js";
import { escapePointerSegment } from "./input.js";
import type { ToolDeclaration } from "./manifest.js";

/** A tool as an MCP server lists it (`tools/list`), reduced to what the comparison reads. */
export interface LiveTool {
  readonly name: string;
  readonly inputSchema?: unknown;
  readonly outputSchema?: unknown;
}

/** How one schema differs: JSON Pointers (into the schema) present only upstream, only in the manifest, or different. */
export interface SchemaChange {
  readonly schema: "inputSchema" | "outputSchema";
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
}

/** A declared tool that does not match its upstream tool. */
export type ToolDrift =
  | { readonly tool: string; readonly upstreamName: string; readonly kind: "missing" }
  | { readonly tool: string; readonly upstreamName: string; readonly kind: "changed"; readonly changes: readonly SchemaChange[] };

/** What a comparison found: the drifted tools (by `<name>@<version>`) and upstream tools the manifest does not declare. */
export interface UpstreamDrift {
  readonly drifted: readonly ToolDrift[];
  readonly undeclared: readonly string[];
}

/** Compares declared tools with a server's live tool list. */
export function compareUpstreamTools(declared: readonly ToolDeclaration[], live: readonly LiveTool[]): UpstreamDrift {
  const byName = new Map(live.map((tool) => [tool.name, tool]));
  const used = new Set<string>();
  const drifted: ToolDrift[] = [];
  for (const tool of declared) {
    const name = `${tool.name}@${tool.version}`;
    const upstreamName = tool.upstreamName ?? tool.name;
    used.add(upstreamName);
    const found = byName.get(upstreamName);
    if (found === undefined) {
      drifted.push({ tool: name, upstreamName, kind: "missing" });
      continue;
    }
    const changes: SchemaChange[] = [];
    const input = schemaChange("inputSchema", tool.inputSchema, found.inputSchema ?? {});
    if (input !== undefined) changes.push(input);
    if (tool.outputSchema !== undefined) {
      const output = schemaChange("outputSchema", tool.outputSchema, found.outputSchema);
      if (output !== undefined) changes.push(output);
    }
    if (changes.length > 0) drifted.push({ tool: name, upstreamName, kind: "changed", changes });
  }
  return { drifted, undeclared: live.map((tool) => tool.name).filter((name) => !used.has(name)) };
}

/** One line for people: what changed and where, e.g. `read-file@1 (upstream "read_file"): inputSchema changed at /properties/path/type`. */
export function describeToolDrift(drift: ToolDrift): string {
  const head = `${drift.tool} (upstream ${JSON.stringify(drift.upstreamName)})`;
  if (drift.kind === "missing") return `${head}: the server lists no such tool`;
  const parts = drift.changes.map((change) => {
    const list = (what: string, pointers: readonly string[]) => (pointers.length === 0 ? [] : [`${what} ${pointers.map(shownPointer).join(", ")}`]);
    const said = [...list("added", change.added), ...list("removed", change.removed), ...list("changed at", change.changed)];
    return `${change.schema} ${said.join("; ")}`;
  });
  return `${head}: ${parts.join("; ")}`;
}

function shownPointer(pointer: string): string {
  return pointer === "" ? "(the whole schema)" : pointer;
}

function schemaChange(schema: SchemaChange["schema"], declared: unknown, live: unknown): SchemaChange | undefined {
  if (live !== undefined && canonicalJson(declared) === canonicalJson(live)) return undefined;
  const change = { schema, added: [] as string[], removed: [] as string[], changed: [] as string[] };
  if (live === undefined) change.removed.push("");
  else diff(declared, live, "", change);
  return change;
}

/** Walks both values, noting pointers only upstream has (added), only the manifest has (removed), and differing leaves. */
function diff(declared: unknown, live: unknown, at: string, change: { added: string[]; removed: string[]; changed: string[] }): void {
  const bothObjects = isRecord(declared) && isRecord(live);
  const bothArrays = Array.isArray(declared) && Array.isArray(live);
  if (!bothObjects && !bothArrays) {
    if (canonicalJson(declared) !== canonicalJson(live)) change.changed.push(at);
    return;
  }
  const left = declared as Record<string, unknown>;
  const right = live as Record<string, unknown>;
  const keys = bothArrays
    ? Array.from({ length: Math.max((declared as unknown[]).length, (live as unknown[]).length) }, (_, index) => String(index))
    : [...new Set([...Object.keys(left), ...Object.keys(right)])].sort();
  for (const key of keys) {
    const pointer = `${at}/${escapePointerSegment(key)}`;
    if (!Object.hasOwn(left, key)) change.added.push(pointer);
    else if (!Object.hasOwn(right, key)) change.removed.push(pointer);
    else diff(left[key], right[key], pointer, change);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
