/** How a toolpact tool looks in `tools/list`, and how the list is paged. */
import { ProtocolError, ProtocolErrorCode, type ListToolsResult, type Tool } from "@modelcontextprotocol/server";
import type { ToolListing } from "@toolpact/runtime";
import type { ToolDirectory } from "./tool-names.js";

/** `_meta` key naming the toolpact tool behind an MCP tool (`<pluginId>:<name>@<version>`). */
export const TOOL_META_KEY = "toolpact/tool";
/** Tools per `tools/list` page unless configured otherwise. */
export const DEFAULT_PAGE_SIZE = 100;

/**
 * The page of a directory after `cursor` (absent: the first page). A cursor names the last tool of the
 * page before, so paging stays consistent when tools come and go between pages.
 * @throws ProtocolError InvalidParams for a cursor this server did not make.
 */
export function listPage(directory: ToolDirectory, cursor: string | undefined, pageSize: number): ListToolsResult {
  let start = 0;
  if (cursor !== undefined) {
    const after = decodeCursor(cursor);
    start = directory.names.findIndex((name) => name > after);
    if (start < 0) start = directory.names.length;
  }
  const names = directory.names.slice(start, start + pageSize);
  const tools = names.map((name) => describeTool(name, directory.resolve(name)!));
  const more = start + pageSize < directory.names.length;
  return more ? { tools, nextCursor: encodeCursor(names[names.length - 1]!) } : { tools };
}

/**
 * A tool as MCP lists it: the schemas as declared (an `outputSchema` whose root is not an object is
 * left out: MCP requires an object), annotations from the effect, and a description that says what
 * calling it involves.
 */
export function describeTool(name: string, tool: ToolListing): Tool {
  const outputSchema = isObjectSchema(tool.outputSchema) ? tool.outputSchema : undefined;
  return {
    name,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    description: descriptionOf(tool),
    inputSchema: tool.inputSchema as Tool["inputSchema"],
    ...(outputSchema === undefined ? {} : { outputSchema: outputSchema as NonNullable<Tool["outputSchema"]> }),
    annotations: {
      ...(tool.title === undefined ? {} : { title: tool.title }),
      readOnlyHint: tool.effect === "read",
      destructiveHint: tool.effect === "write",
      openWorldHint: tool.effect === "external",
    },
    _meta: { [TOOL_META_KEY]: tool.fullName },
  };
}

/** True for a schema MCP accepts as `outputSchema`: a JSON object with `"type": "object"` at its root. */
export function isObjectSchema(schema: unknown): schema is Record<string, unknown> & { type: "object" } {
  return typeof schema === "object" && schema !== null && !Array.isArray(schema) && (schema as { type?: unknown }).type === "object";
}

const EFFECT_WORDS = {
  read: "reads data",
  write: "changes data",
  external: "acts outside this platform",
} as const;

function descriptionOf(tool: ToolListing): string {
  const confirm = tool.requiresConfirmation ? "; each call waits for the user to approve it on toolpact's confirmation page" : "";
  const facts = `${tool.fullName}: ${EFFECT_WORDS[tool.effect]}${confirm}`;
  const own = tool.description ?? tool.title;
  return own === undefined ? facts : `${own}\n\n(${facts})`;
}

function encodeCursor(lastName: string): string {
  return Buffer.from(`after:${lastName}`, "utf8").toString("base64url");
}

function decodeCursor(cursor: string): string {
  const text = /^[A-Za-z0-9_-]{1,400}$/.test(cursor) ? Buffer.from(cursor, "base64url").toString("utf8") : "";
  if (!text.startsWith("after:")) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, "invalid cursor: pass the nextCursor of the previous tools/list page unchanged");
  }
  return text.slice("after:".length);
}
