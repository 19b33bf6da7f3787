// An MCP server (@modelcontextprotocol/sdk, McpServer + StreamableHTTPServerTransport on node:http) exposing
// the same lookup as the tool "get-item". Mode "stateless": a fresh server and transport per request, as the
// SDK requires without sessions. Mode "session": one server and transport per session (Mcp-Session-Id).
// Responses use the transport's default (an SSE stream per POST).
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { lookupItem } from "../../lib/work.mjs";

const mode = process.argv[2];
if (mode !== "stateless" && mode !== "session") throw new Error(`usage: mcp.mjs stateless|session (got ${mode})`);

function createMcpServer() {
  const server = new McpServer({ name: "bench-items", version: "1.0.0" });
  server.registerTool("get-item", { description: "Looks an item up by id.", inputSchema: { id: z.string().min(1).max(64) } }, async ({ id }) => ({
    content: [{ type: "text", text: JSON.stringify(lookupItem(id)) }],
  }));
  return server;
}

function readJson(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("error", reject);
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch (error) {
        reject(error);
      }
    });
  });
}

function refuse(res, status, message) {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

async function stateless(req, res) {
  if (req.method !== "POST") return refuse(res, 405, "Method not allowed.");
  const body = await readJson(req);
  const server = createMcpServer();
  const transport = new StreamableHTTPServerTransport({});
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

const sessions = new Map();

async function session(req, res) {
  const sessionId = req.headers["mcp-session-id"];
  const known = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
  if (req.method !== "POST") {
    if (known === undefined) return refuse(res, 400, "Bad Request: no valid session ID");
    return known.handleRequest(req, res);
  }
  const body = await readJson(req);
  if (known !== undefined) return known.handleRequest(req, res, body);
  if (sessionId !== undefined || !isInitializeRequest(body)) return refuse(res, 400, "Bad Request: no valid session ID");
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => sessions.set(id, transport),
  });
  transport.onclose = () => {
    if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
  };
  await createMcpServer().connect(transport);
  await transport.handleRequest(req, res, body);
}

const handle = mode === "stateless" ? stateless : session;
const server = createServer((req, res) => {
  handle(req, res).catch((error) => {
    if (!res.headersSent) refuse(res, 500, `Internal error: ${error.message}`);
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (server.address()).port}/mcp` })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)).closeAllConnections());
