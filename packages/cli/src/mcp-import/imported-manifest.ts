import type { Tool } from "@modelcontextprotocol/client";
import { manifestSchema, parseManifest, toolDeclarationSchema, type Diagnostic } from "@toolpact/contract";
import { inferBehaviour } from "./effect-inference.js";
import { json, jsoncArray, jsoncObject, printJsonc, type JsonValue, type JsoncItem, type JsoncMember } from "./jsonc-text.js";
import type { ServerTools } from "./server-tools.js";
import { importedNames } from "./tool-names.js";

/** The manifest's limits on what is carried over (the contract's own, read from its schema). */
const TITLE_MAX_LENGTH = toolDeclarationSchema.shape.title.unwrap().maxLength ?? Infinity;
const DESCRIPTION_MAX_LENGTH = toolDeclarationSchema.shape.description.unwrap().maxLength ?? Infinity;
const PLUGIN_NAME_MAX_LENGTH = manifestSchema.shape.name.unwrap().maxLength ?? Infinity;

/** What the plugin's manifest says besides its tools. */
export interface PluginHead {
  readonly id: string;
  readonly version: string;
  /** The `upstream` object, as it is written. */
  readonly upstream: Readonly<Record<string, JsonValue>>;
  /** Comment lines above `upstream`. */
  readonly upstreamNotes: readonly string[];
}

/** One tool as imported: its names, its inferred effect, and what toolpact's loader said of it. */
export interface ImportedTool {
  readonly name: string;
  readonly upstreamName: string;
  readonly effect: string;
  /** The loader's errors: this tool is refused as written. */
  readonly refusals: readonly string[];
  readonly warnings: readonly string[];
}

/** The manifest's text, and what a person should hear about it. */
export interface ImportedManifest {
  readonly text: string;
  readonly tools: readonly ImportedTool[];
  /** Errors the loader reports outside any one tool (the file as a whole). */
  readonly refusals: readonly string[];
}

/**
 * A plugin.json (JSONC) for a person to review: the server's tools with their names made valid,
 * titles, descriptions and schemas carried over, effects inferred from the hints, and a `//` note on
 * each inference. The text is then loaded as toolpact loads it; a tool the loader refuses is marked
 * REFUSED with the reasons, so that the file still says everything the server offered.
 */
export function importedManifest(listed: ServerTools, head: PluginHead, file: string): ImportedManifest {
  const names = importedNames(listed.tools.map((tool) => tool.name));
  const drafts = listed.tools.map((tool, index) => draftTool(tool, names[index]!.name, names[index]!.notes));
  const first = parseManifest(render(listed, head, drafts, new Map()), file);
  const diagnostics = first.ok ? first.warnings : first.diagnostics;
  const perTool = new Map<number, Diagnostic[]>();
  const whole: string[] = [];
  for (const diagnostic of diagnostics) {
    const index = /^\/tools\/(\d+)(\/|$)/.exec(diagnostic.pointer)?.[1];
    if (index === undefined) {
      if (diagnostic.severity === "error") whole.push(`${diagnostic.message} (at ${diagnostic.pointer || "the top"})`);
      continue;
    }
    perTool.set(Number(index), [...(perTool.get(Number(index)) ?? []), diagnostic]);
  }
  const text = render(listed, head, drafts, perTool, whole);
  const tools = drafts.map((draft, index) => {
    const found = perTool.get(index) ?? [];
    const shown = (severity: Diagnostic["severity"]) => found.filter((d) => d.severity === severity).map((d) => `${withinTool(d.pointer)}: ${d.message}`);
    return { name: draft.name, upstreamName: draft.upstreamName, effect: draft.effect, refusals: shown("error"), warnings: shown("warning") };
  });
  return { text, tools, refusals: whole };
}

/** A tool's declaration before the loader has looked at it. */
interface DraftTool {
  readonly name: string;
  readonly upstreamName: string;
  readonly effect: string;
  readonly members: readonly JsoncMember[];
}

function draftTool(tool: Tool, name: string, nameNotes: readonly string[]): DraftTool {
  const behaviour = inferBehaviour(tool.annotations);
  const title = tool.title ?? tool.annotations?.title;
  const described = tool.description !== undefined && tool.description !== "";
  const members: (JsoncMember | undefined)[] = [
    {
      key: "name",
      value: json(name),
      comments: [...nameNotes, ...(described ? [] : ["the server gives no description: write one (it becomes the generated client's JSDoc)"])],
    },
    name === tool.name ? undefined : { key: "upstreamName", value: json(tool.name), comments: [] },
    title === undefined || title === "" ? undefined : carried("title", title, TITLE_MAX_LENGTH),
    described ? carried("description", tool.description!, DESCRIPTION_MAX_LENGTH) : undefined,
    { key: "effect", value: json(behaviour.effect), comments: behaviour.notes },
    { key: "inputSchema", value: json(tool.inputSchema as JsonValue) },
    tool.outputSchema === undefined ? undefined : { key: "outputSchema", value: json(tool.outputSchema as JsonValue) },
  ];
  return { name, upstreamName: tool.name, effect: behaviour.effect, members: members.filter((member) => member !== undefined) };
}

/** A text carried over, cut to the manifest's limit with a note when the server's is longer. */
function carried(key: string, text: string, limit: number): JsoncMember {
  if (text.length <= limit) return { key, value: json(text) };
  return {
    key,
    value: json(text.slice(0, limit)),
    comments: [`the server's ${key} has ${text.length} characters; a manifest takes ${limit}, so it is cut: shorten it by hand`],
  };
}

function render(
  listed: ServerTools,
  head: PluginHead,
  drafts: readonly DraftTool[],
  perTool: ReadonlyMap<number, readonly Diagnostic[]>,
  whole: readonly string[] = [],
): string {
  const refused = [...perTool.values()].filter((found) => found.some((d) => d.severity === "error")).length;
  const server = listed.server;
  const header = [
    `Written by \`toolpact import mcp\` from the MCP server ${server === undefined ? "(it gave no name)" : `${JSON.stringify(server.name)} ${server.version}`}` +
      `${listed.protocolVersion === undefined ? "" : ` (protocol ${listed.protocolVersion})`}.`,
    "Review it before serving it: each // note says what was inferred from the server's hints and what to check. " +
      "The hints are the server's own claims; toolpact enforces what this file says (effect, confirmation, recovery). " +
      "At load, a tool whose schemas differ from the server's live ones is refused: import again into another folder " +
      "and `toolpact diff` the two files to see what changed.",
    ...(refused > 0
      ? [`${refused} tool${refused === 1 ? " is" : "s are"} refused as written (marked REFUSED): fix or remove them, then run toolpact validate.`]
      : []),
    ...whole.map((message) => `REFUSED as written: ${message}`),
  ];
  const items: JsoncItem[] = drafts.map((draft, index) => {
    const found = perTool.get(index) ?? [];
    const comments = [
      ...found.filter((d) => d.severity === "error").map((d) => `REFUSED: toolpact will not load this tool as written: ${withinTool(d.pointer)}: ${d.message}`),
      ...found.filter((d) => d.severity === "warning").map((d) => `warning: ${withinTool(d.pointer)}: ${d.message}`),
    ];
    return { value: jsoncObject(draft.members), comments };
  });
  const serverName = server?.title ?? server?.name;
  const root = jsoncObject([
    { key: "id", value: json(head.id) },
    serverName === undefined || serverName === "" ? undefined : { key: "name", value: json(serverName.slice(0, PLUGIN_NAME_MAX_LENGTH)) },
    { key: "version", value: json(head.version) },
    { key: "permissions", value: json(["tools:provide"]) },
    { key: "upstream", value: json(head.upstream), comments: head.upstreamNotes },
    { key: "tools", value: jsoncArray(items) },
  ]);
  return printJsonc(header, root);
}

/** `/tools/3/inputSchema/properties/x` -> `inputSchema/properties/x`. */
function withinTool(pointer: string): string {
  return pointer.replace(/^\/tools\/\d+\/?/, "") || "the tool";
}
