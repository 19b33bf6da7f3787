import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createToolpactRoutes, plain, ROUTES_HINT, type ToolpactRoutesOptions } from "./request-listener.js";

export { DEFAULT_MAX_BODY_BYTES, DEFAULT_SESSION_TTL_SECONDS } from "./request-listener.js";

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
    if (routes.serve(req, res, path, query < 0 ? "" : target.slice(query))) return;
    res.setHeader("x-content-type-options", "nosniff");
    res.setHeader("cache-control", "no-store");
    plain(req, res, 404, `not found: ${ROUTES_HINT}`);
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
