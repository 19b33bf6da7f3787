import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { TRPCError } from "@trpc/server";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { createMcpHttpHandler, type McpHttpOptions } from "@toolpact/mcp";
import type { Principal, Runtime } from "@toolpact/runtime";
import { CONFIRM_PREFIX, CSRF_HEADER, createConfirmationPage, requirePresence } from "./confirmation-page.js";
import { createAdminKeyCheck, credentialsOf } from "./credentials.js";
import { describeInternalError, toErrorShape, toPublicError } from "./errors.js";
import { silentLogger, type Logger } from "./logger.js";
import { createPresenceSessions } from "./presence-session.js";
import { appRouter, type ServerContext } from "./router.js";

/** Options of `createToolpactServer`; every omitted one has a default. */
export interface ToolpactServerOptions {
  readonly runtime: Runtime;
  /** The admin credential; undefined disables the admin procedures. */
  readonly adminKey: string | undefined;
  /** Default `127.0.0.1`. */
  readonly host?: string;
  /** Default 4400; 0 picks a free port. */
  readonly port?: number;
  /** Largest request body; default 1 MiB. Larger bodies are refused while streaming, before any parse. */
  readonly maxBodyBytes?: number;
  /** How long `close()` waits for in-flight requests before cutting connections; default 15 s. */
  readonly drainTimeoutMs?: number;
  readonly logger?: Logger;
  /**
   * The base URL people reach this server at (the runtime's `publicUrl`): an https URL makes the
   * confirmation session cookie `Secure`, and its path prefix goes into the cookie's `Path`.
   */
  readonly publicUrl?: string;
  /**
   * At least 32 bytes; confirmation-page sessions and CSRF tokens are signed with keys derived from
   * it (`derivePresenceSessionSecret(firstSigningKey)` in the host, so every instance accepts every
   * session). Default: a random per-process secret: sessions then end with the process and work
   * only on the instance that started them.
   */
  readonly sessionSecret?: Uint8Array;
  /** How long a confirmation-page session lasts, seconds; default 600. */
  readonly sessionTtlSeconds?: number;
  /** The MCP endpoint at `/mcp`: sessions on or off, idle and polling periods (see `createMcpHttpHandler`). */
  readonly mcp?: Pick<McpHttpOptions, "sessions" | "sessionIdleMs" | "toolsPollMs" | "maxSessionsPerCaller" | "waitRoundMs" | "pageSize">;
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
/** 1 MiB: the largest request body accepted unless configured otherwise. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_DRAIN_TIMEOUT_MS = 15_000;
/** Ten minutes: how long a confirmation-page session lasts unless configured otherwise. */
export const DEFAULT_SESSION_TTL_SECONDS = 600;
const TRPC_PREFIX = "/trpc/";
const MCP_PATH = "/mcp";

/** Creates the HTTP server around a runtime; call `listen()` to start it. */
export function createToolpactServer(options: ToolpactServerOptions): ToolpactServer {
  const runtime = options.runtime;
  const host = options.host ?? DEFAULT_HOST;
  const port = options.port ?? DEFAULT_PORT;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
  const logger = options.logger ?? silentLogger;
  const isAdminKey = createAdminKeyCheck(options.adminKey);
  const publicUrl = options.publicUrl === undefined ? undefined : new URL(options.publicUrl);
  const sessions = createPresenceSessions({
    secret: options.sessionSecret ?? new Uint8Array(randomBytes(32)),
    ttlSeconds: options.sessionTtlSeconds ?? DEFAULT_SESSION_TTL_SECONDS,
    secure: publicUrl?.protocol === "https:",
    path: `${publicUrl === undefined ? "" : publicUrl.pathname.replace(/\/+$/, "")}${CONFIRM_PREFIX.slice(0, -1)}`,
    clock: Date.now,
  });
  const shutdownController = new AbortController();
  const shutdownSignal = shutdownController.signal;
  const presencePage = { sessions, publicHost: publicUrl?.host };
  const confirmationPage = createConfirmationPage({ ...presencePage, runtime, logger, shutdown: shutdownSignal });
  const mcp = createMcpHttpHandler({
    ...options.mcp,
    runtime,
    authenticate: (req) => runtime.authenticate(credentialsOf(req.headers)),
    maxBodyBytes,
    ...(publicUrl === undefined ? {} : { publicUrl }),
    shutdown: shutdownSignal,
    logger,
  });

  let url: string | undefined;
  let listening = false;
  let closing = false;
  let closed: Promise<void> | undefined;
  let adminAuthFailures = 0;
  let inFlight = 0;
  let onDrained: (() => void) | undefined;

  const createContext = ({ req }: { req: IncomingMessage }): ServerContext => {
    const credentials = credentialsOf(req.headers);
    let principal: Promise<Principal> | undefined;
    return {
      runtime,
      // Step 1 failures are counted and logged by the runtime (runtime.metrics.authFailures).
      authenticate: () => (principal ??= runtime.authenticate(credentials)),
      authorizeAdmin: () => {
        if (isAdminKey(credentials.pluginKey)) return true;
        adminAuthFailures += 1;
        logger.warn({
          event: "admin_authentication_failed",
          reason: credentials.pluginKey === undefined ? "no admin key presented" : "wrong admin key",
          adminAuthFailures,
        });
        return false;
      },
      presence: async () => {
        const csrf = req.headers[CSRF_HEADER];
        return requirePresence(presencePage, req.headers, typeof csrf === "string" ? csrf : undefined);
      },
      shutdown: shutdownSignal,
    };
  };

  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: TRPC_PREFIX,
    maxBodySize: maxBodyBytes,
    // One call per request: a batch would hold many 25 s long polls, or bundle calls past per-request limits.
    allowBatching: false,
    createContext,
    onError: ({ error, path }) => {
      if (toPublicError(error).internal) logger.error({ event: "request_failed_unexpectedly", path, ...describeInternalError(error) });
    },
  });

  const release = () => {
    inFlight -= 1;
    if (inFlight === 0) onDrained?.();
  };

  const server = createServer((req, res) => {
    inFlight += 1;
    res.once("close", release);
    res.setHeader("x-content-type-options", "nosniff");
    res.setHeader("cache-control", "no-store");
    if (closing) res.setHeader("connection", "close");
    const target = req.url ?? "/";
    const query = target.indexOf("?");
    const path = query < 0 ? target : target.slice(0, query);
    if (path.startsWith(TRPC_PREFIX)) {
      if (query >= 0 && new URLSearchParams(target.slice(query + 1)).has("batch")) {
        return refuseBatch(res, path.slice(TRPC_PREFIX.length));
      }
      const declared = Number(req.headers["content-length"] ?? 0);
      if (declared > maxBodyBytes) return refuseLargeBody(req, res, path.slice(TRPC_PREFIX.length));
      return trpc(req, res);
    }
    if (path === MCP_PATH) return mcp(req, res);
    if (path.startsWith(CONFIRM_PREFIX)) return confirmationPage(req, res, path);
    if (path === "/healthz") return plain(req, res, 200, "ok");
    if (path === "/readyz") {
      void isReady().then((ready) => plain(req, res, ready ? 200 : 503, ready ? "ready" : "not ready"));
      return;
    }
    plain(req, res, 404, "not found: the API is at /trpc, MCP at /mcp, the confirmation page at /confirm/, health at /healthz and /readyz");
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;

  const isReady = async (): Promise<boolean> => {
    if (closing) return false;
    try {
      return await runtime.ready();
    } catch {
      return false;
    }
  };

  const drain = (): Promise<void> =>
    new Promise((resolve) => {
      if (inFlight === 0) return resolve();
      const timer = setTimeout(resolve, drainTimeoutMs);
      timer.unref();
      onDrained = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const shutDown = async (): Promise<void> => {
    closing = true;
    shutdownController.abort(new Error("the server is shutting down"));
    if (listening) {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await drain();
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
      return adminAuthFailures;
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

function plain(req: IncomingMessage, res: ServerResponse, status: number, text: string): void {
  if (req.method !== "GET" && req.method !== "HEAD") {
    status = 405;
    text = "method not allowed: use GET";
    res.setHeader("allow", "GET, HEAD");
  }
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
  res.end(req.method === "HEAD" ? undefined : text);
}

/** Answers 400 to a batched request (`?batch=...`) before reading its body or running any of its calls. */
function refuseBatch(res: ServerResponse, procedures: string): void {
  const message = "batched requests are not accepted: send one call per request (tRPC's httpLink, not httpBatchLink)";
  const shape = toErrorShape(
    { trpcCode: "BAD_REQUEST", message, toolpactCode: "INPUT_INVALID", toolpactData: { issues: [{ path: "", message }] }, internal: false },
    procedures.slice(0, 200),
  );
  res.writeHead(shape.data.httpStatus, { "content-type": "application/json", connection: "close" });
  res.end(JSON.stringify({ error: shape }));
}

/** How much of an oversized body is read and dropped (so the client sees the 413), at most. */
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Answers 413 from the declared length alone, without keeping the body: the whole answer is written at
 * once (a client that reads while it sends sees it at once), and the rest of the body is read and
 * dropped before the connection closes, so a client still sending gets the 413 rather than a reset
 * connection (EPIPE). A body past DRAIN_MAX_BYTES, or one that stalls past the request timeout, is cut.
 */
function refuseLargeBody(req: IncomingMessage, res: ServerResponse, procedure: string): void {
  const shape = toErrorShape(toPublicError(new TRPCError({ code: "PAYLOAD_TOO_LARGE" })), procedure);
  const body = JSON.stringify({ error: shape });
  res.writeHead(shape.data.httpStatus, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    connection: "close",
  });
  res.write(body);
  let drained = 0;
  req.on("data", (chunk: Buffer) => {
    drained += chunk.byteLength;
    if (drained > DRAIN_MAX_BYTES) req.destroy();
  });
  req.once("end", () => res.end());
  req.once("error", () => res.destroy());
}
