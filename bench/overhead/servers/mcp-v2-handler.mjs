// The MCP SDK v2's own stateless handler (@modelcontextprotocol/server 2.4, createMcpHandler) exposing the
// bench's lookup as the tool "get-item" at 2026-07-28: every request answered by a fresh server from the
// factory, no initialize, no session (2025-era requests are refused). Served over node:http by mcp-v2.mjs;
// called in process by bench/profile/mcp-2026-in-process.mjs.
import { createMcpHandler, fromJsonSchema, McpServer } from "@modelcontextprotocol/server";
import { lookupItem } from "../../lib/work.mjs";

const ItemInput = fromJsonSchema({ type: "object", properties: { id: { type: "string", minLength: 1, maxLength: 64 } }, required: ["id"] });

/** A Fetch handler (`fetch(request)`) answering `tools/call` of "get-item" as the SDK's stateless server does. */
export function createItemsMcpHandler() {
  return createMcpHandler(
    () => {
      const server = new McpServer({ name: "bench-items", version: "1.0.0" });
      server.registerTool("get-item", { description: "Looks an item up by id.", inputSchema: ItemInput }, async ({ id }) => ({
        content: [{ type: "text", text: JSON.stringify(lookupItem(id)) }],
      }));
      return server;
    },
    { legacy: "reject" },
  );
}
