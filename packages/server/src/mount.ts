import type { IncomingMessage, ServerResponse } from "node:http";
import { createToolpactRoutes, ROUTES_HINT, type ToolpactRoutes, type ToolpactRoutesOptions } from "./fetch-handler.js";
import { serveNodeRequest, writeFetchResponse } from "./node-adapter.js";
import { plain } from "./trpc-refusals.js";

/** Options of the handlers an existing app mounts: the standalone server's, without host and port. */
export interface ToolpactHandlerOptions extends ToolpactRoutesOptions {
  /**
   * The path the app mounts toolpact under, e.g. `/toolpact`: it is removed from each request's path
   * before routing. Leave it out when the framework removes it itself (Express `app.use("/toolpact", ...)`).
   * Set `publicUrl` to the same prefix (`https://app.example/toolpact`) so confirmation links and the
   * session cookie's path point at the mount.
   */
  readonly basePath?: string;
}

/** What both handlers share: closing them. */
interface ClosableHandler {
  /**
   * Ends long polls and MCP streams and waits (bounded by `drainTimeoutMs`) for requests in flight.
   * The runtime stays open: it is the app's, close it after this.
   */
  close(): Promise<void>;
  /** Admin requests refused for a missing or wrong admin key since start. */
  readonly adminAuthFailures: number;
}

/**
 * A Node `(req, res, next?)` handler (Express, Fastify's raw request and reply, `node:http`). A request
 * outside toolpact's routes goes to `next` when given, else gets a 404.
 */
export interface ToolpactNodeHandler extends ClosableHandler {
  (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): void;
}

/** A Fetch API handler (Hono, Next.js route handlers, Bun, Deno): a request outside toolpact's routes gets a 404. */
export interface ToolpactFetchHandler extends ClosableHandler {
  (request: Request): Promise<Response>;
}

/**
 * toolpact's routes (tRPC under `/trpc/`, MCP at `/mcp`, the confirmation page under `/confirm/`,
 * `/healthz`, `/readyz`) as a Node handler to mount in an existing app, with the standalone server's
 * limits: the body limit (413), each route's content types (415) and cross-site refusals.
 * Mount it before any body parser: it reads the request body itself.
 *
 * @example
 * const toolpact = createNodeHandler({ runtime, adminKey, publicUrl: "https://app.example/toolpact" });
 * app.use("/toolpact", toolpact); // Express
 */
export function createNodeHandler(options: ToolpactHandlerOptions): ToolpactNodeHandler {
  const basePath = normalizeBasePath(options.basePath);
  const routes = createToolpactRoutes(options, basePath, true);
  const answerNotFound = (method: string): Response => plain(method, 404, notFound, { "x-content-type-options": "nosniff" });
  const notFound = notFoundText(basePath);
  const handler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): void => {
    const target = req.url ?? "/";
    const query = target.indexOf("?");
    const path = withoutBase(query < 0 ? target : target.slice(0, query), basePath);
    if (path === undefined || !routes.owns(path)) {
      if (next !== undefined) next();
      else void writeFetchResponse(answerNotFound(req.method ?? "GET"), req, res);
      return;
    }
    serveNodeRequest(
      req,
      res,
      (request) => routes.serve(request, path, query < 0 ? "" : target.slice(query), (written) => res.once("close", written)) ?? answerNotFound(request.method),
    );
  };
  return withClose(handler, routes);
}

/**
 * toolpact's routes as a Fetch API handler, `(request) => Promise<Response>`, with the same routes and
 * limits as `createNodeHandler` and the standalone server: this is the core they wrap.
 *
 * @example
 * const toolpact = createFetchHandler({ runtime, adminKey, basePath: "/toolpact" });
 * app.all("/toolpact/*", (c) => toolpact(c.req.raw)); // Hono
 */
export function createFetchHandler(options: ToolpactHandlerOptions): ToolpactFetchHandler {
  const basePath = normalizeBasePath(options.basePath);
  const routes = createToolpactRoutes(options, basePath, true);
  const answerNotFound = (method: string): Response => plain(method, 404, notFound, { "x-content-type-options": "nosniff" });
  const notFound = notFoundText(basePath);
  const handler = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const path = withoutBase(url.pathname, basePath);
    const answer = path === undefined ? undefined : routes.serve(request, path, url.search);
    return answer ?? answerNotFound(request.method);
  };
  return withClose(handler, routes);
}

function notFoundText(basePath: string): string {
  return `not found: ${ROUTES_HINT}${basePath === "" ? "" : ` (under ${basePath})`}`;
}

/** The handler with `close` and `adminAuthFailures` (a live count) attached. */
function withClose<THandler extends object>(handler: THandler, routes: ToolpactRoutes): THandler & ClosableHandler {
  let closed: Promise<void> | undefined;
  return Object.defineProperties(handler, {
    close: { value: () => (closed ??= routes.drain()) },
    adminAuthFailures: { get: () => routes.adminAuthFailures },
  }) as THandler & ClosableHandler;
}

/** `/toolpact` from `toolpact`, `/toolpact/` or `/toolpact`; the empty string for none. */
function normalizeBasePath(basePath: string | undefined): string {
  if (basePath === undefined) return "";
  const trimmed = basePath.replace(/\/+$/, "");
  if (trimmed === "") return "";
  return trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
}

/** The path below `basePath`, or undefined when the request is not under it. */
function withoutBase(path: string, basePath: string): string | undefined {
  if (basePath === "") return path;
  if (path === basePath) return "/";
  return path.startsWith(`${basePath}/`) ? path.slice(basePath.length) : undefined;
}
