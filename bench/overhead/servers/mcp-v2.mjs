// The MCP SDK v2's own stateless server (@modelcontextprotocol/server 2.4, createMcpHandler on node:http)
// exposing the same lookup as the tool "get-item", at 2026-07-28: every request answered by a fresh server
// from the factory, no initialize, no session (2025-era requests are refused: this row measures 2026-07-28).
import { createServer } from "node:http";
import { createItemsMcpHandler } from "./mcp-v2-handler.mjs";

const handler = createItemsMcpHandler();

/** node:http to a web Request and back (what @modelcontextprotocol/node's toNodeHandler does). */
async function handle(req, res) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
  const body = req.method === "POST" ? Buffer.concat(chunks) : undefined;
  const response = await handler.fetch(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body }));
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}

const server = createServer((req, res) => {
  handle(req, res).catch((error) => {
    if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: error.message }));
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (server.address()).port}/mcp` })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)).closeAllConnections());
