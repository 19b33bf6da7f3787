/**
 * A Streamable HTTP MCP server for the `--url` import: the v2 server SDK's `Server` behind its own
 * `createMcpHandler`, on node:http at 127.0.0.1, listing whatever tools the test gives it, a page at a time,
 * and (when given a token) refusing requests without `Authorization: Bearer <token>`.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { Server, createMcpHandler } from "@modelcontextprotocol/server";

/** A tool as the server lists it (the MCP `Tool` shape). */
export interface ListedTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: Record<string, unknown>;
  readonly outputSchema?: Record<string, unknown>;
  readonly annotations?: Record<string, unknown>;
}

/** A running test server. */
export interface HttpMcpServer {
  /** Its MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  /** Replaces the tools it lists from the next request on. */
  setTools(tools: readonly ListedTool[]): void;
  /** tools/list requests it answered (one per page). */
  readonly pagesServed: () => number;
  close(): Promise<void>;
}

export interface HttpMcpServerOptions {
  readonly tools: readonly ListedTool[];
  /** Tools per tools/list page; default 2, so that any real list has several pages. */
  readonly pageSize?: number;
  readonly token?: string;
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startHttpMcpServer(options: HttpMcpServerOptions): Promise<HttpMcpServer> {
  let tools = [...options.tools];
  let pages = 0;
  const pageSize = options.pageSize ?? 2;
  const handler = createMcpHandler(() => {
    const server = new Server({ name: "import-test-server", version: "3.1.4" }, { capabilities: { tools: {} } });
    server.setRequestHandler("tools/list", async (request) => {
      pages++;
      const start = Number(request.params?.cursor ?? "0");
      const next = start + pageSize;
      return { tools: tools.slice(start, next) as never[], ...(next < tools.length ? { nextCursor: String(next) } : {}) };
    });
    return server;
  });
  const http = createServer((req, res) => {
    void (async () => {
      if (options.token !== undefined && req.headers.authorization !== `Bearer ${options.token}`) {
        res.writeHead(401, { "content-type": "application/json", "www-authenticate": "Bearer" }).end('{"error":"invalid_token"}');
        return;
      }
      const response = await handler.fetch(await toRequest(req));
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body !== null) for await (const chunk of response.body) res.write(chunk);
      res.end();
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    setTools: (next) => void (tools = [...next]),
    pagesServed: () => pages,
    close: async () => {
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function toRequest(req: IncomingMessage): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
  }
  const body = req.method === "GET" || req.method === "HEAD" ? undefined : Buffer.concat(chunks);
  return new Request(`http://127.0.0.1${req.url ?? "/"}`, { method: req.method ?? "GET", headers, ...(body === undefined ? {} : { body }) });
}
