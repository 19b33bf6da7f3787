import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createToolpactRoutes, ROUTES_HINT, type ToolpactRoutesOptions } from "./fetch-handler.js";
import { serveNodeRequest, writeFetchResponse } from "./node-adapter.js";
import { plain } from "./trpc-refusals.js";

export { DEFAULT_MAX_BODY_BYTES, DEFAULT_SESSION_TTL_SECONDS } from "./fetch-handler.js";

/** Options of `createToolpactServer`; every omitted one has a default. */
export interface ToolpactServerOptions extends ToolpactRoutesOptions {
  /** Default `127.0.0.1`. */
  readonly host?: string;
  /** Default 4400; 0 picks a free port. */
  readonly port?: number;
}

/** A toolpact HTTP server: tRPC at `/trpc`, MCP at `/mcp`, the confirmation page at `/confirm/`, `GET /healthz`, `GET /readyz`. */
export interface ToolpactServer {
  /** The base URL, e.g. `http://127.0.0.1:4400`; available once listening. */
  readonly url: string;
  /** Starts listening; resolves with the base URL. */
  listen(): Promise<string>;
  /** Stops accepting, drains in-flight requests (bounded), then closes the runtime. Idempotent. */
  close(): Promise<void>;
  /** Admin requests refused for a missing or wrong admin key since start (caller step-1 failures: `runtime.metrics`). */
  readonly adminAuthFailures: number;
}

/** The port `toolpact serve` listens on unless told otherwise. */
export const DEFAULT_PORT = 4400;
/** Loopback only unless told otherwise. */
export const DEFAULT_HOST = "127.0.0.1";

/** The answer to a path that is none of toolpact's routes. */
function notFound(method: string): Response {
  return plain(method, 404, `not found: ${ROUTES_HINT}`, { "x-content-type-options": "nosniff", "cache-control": "no-store" });
}

/** Creates the HTTP server around a runtime; call `listen()` to start it. */
export function createToolpactServer(options: ToolpactServerOptions): ToolpactServer {
  const runtime = options.runtime;
  const host = options.host ?? DEFAULT_HOST;
  const port = options.port ?? DEFAULT_PORT;
  const routes = createToolpactRoutes(options);

  let url: string | undefined;
  let listening = false;
  let closing = false;
  let closed: Promise<void> | undefined;

  const server = createServer((req, res) => {
    const target = req.url ?? "/";
    const query = target.indexOf("?");
    const path = query < 0 ? target : target.slice(0, query);
    if (routes.owns(path))
      return serveNodeRequest(
        req,
        res,
        (request) => routes.serve(request, path, query < 0 ? "" : target.slice(query), (written) => res.once("close", written)) ?? notFound(request.method),
      );
    void writeFetchResponse(notFound(req.method ?? "GET"), req, res);
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;

  const shutDown = async (): Promise<void> => {
    closing = true;
    const drained = routes.drain();
    if (listening) {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await drained;
      server.closeAllConnections();
      await stopped;
      listening = false;
    }
    await runtime.close();
  };

  return {
    get url() {
      if (url === undefined) throw new Error("the server is not listening yet: await listen() first");
      return url;
    },
    get adminAuthFailures() {
      return routes.adminAuthFailures;
    },
    listen: async () => {
      if (closing) throw new Error("the server was closed: create a new one");
      if (url !== undefined) return url;
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve();
        });
      });
      listening = true;
      const address = server.address() as AddressInfo;
      url = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
      return url;
    },
    close: () => (closed ??= shutDown()),
  };
}
