import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import {
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_BODY_DEPTH,
  DEFAULT_MAX_LONG_POLLS_PER_CALLER,
  DEFAULT_MAX_REQUESTS_PER_CALLER,
  isNestedDeeperThan,
  tooDeep,
} from "@toolpact/contract";
import { createMcpHttpHandler, type McpHttpOptions } from "@toolpact/mcp";
import type { Principal, Runtime } from "@toolpact/runtime";
import { confirmationOriginOf } from "./confirmation-origin.js";
import { CONFIRM_PREFIX, CSRF_HEADER, createConfirmationPage, requirePresence } from "./confirmation-page.js";
import { createCallerAdmission, RETRY_AFTER_SECONDS } from "./caller-admission.js";
import { bearerToken, createAdminKeyCheck, credentialsOf } from "./credentials.js";
import { describeInternalError, toErrorShape, toPublicError } from "./errors.js";
import { silentLogger, type Logger } from "./logger.js";
import { createPresenceSessions } from "./presence-session.js";
import { readCallBody } from "./request-body.js";
import { appRouter, type ServerContext } from "./router.js";

/** What serving toolpact's routes takes, standalone or mounted in an app; every omitted option has a default. */
export interface ToolpactRoutesOptions {
  readonly runtime: Runtime;
  /** The admin credential; undefined disables the admin procedures. */
  readonly adminKey: string | undefined;
  /** Largest request body; default 1 MiB. Larger bodies are refused while streaming, before any parse. */
  readonly maxBodyBytes?: number;
  /** Deepest nesting of a request body (`/trpc` and `/mcp`); default 128. Checked while streaming, before any parse. */
  readonly maxBodyDepth?: number;
  /** Requests one caller (plugin key) may have in flight at once; default 128. The excess is RATE_LIMITED (429). */
  readonly maxRequestsPerCaller?: number;
  /** Long polls (`confirmations.wait`, MCP streams) one caller may hold open at once; default 32. The excess is RATE_LIMITED (429). */
  readonly maxLongPollsPerCaller?: number;
  /** How long closing waits for in-flight requests; default 15 s. */
  readonly drainTimeoutMs?: number;
  readonly logger?: Logger;
  /**
   * The base URL people reach these routes at (the runtime's `publicUrl`): an https URL makes the
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
  /**
   * The origin of the confirmation page's own, e.g. `https://confirm.example.com`, where no other pages
   * run scripts: the page is served, and approvals accepted, there only. A mounted handler without it
   * shares the app's origin, whose scripts could approve in the person's name, so it refuses approvals
   * (docs/embedding.md, "Same-origin mounts").
   */
  readonly confirmationOrigin?: string;
  /** Said on the confirmation page's "Sign-in needed" page: where people find the link that signs them in. */
  readonly confirmationSignInHint?: string;
  /** The MCP endpoint at `/mcp`: sessions on or off, idle and polling periods (see `createMcpHttpHandler`). */
  readonly mcp?: Pick<McpHttpOptions, "sessions" | "sessionIdleMs" | "toolsPollMs" | "maxSessionsPerCaller" | "waitRoundMs" | "pageSize">;
}

/** toolpact's routes as one Node request listener, with the state a server or a mount needs to close it. */
export interface ToolpactRoutes {
  /** Serves `path` (the request's path with any mount prefix removed); false when it is none of toolpact's routes. */
  serve(req: IncomingMessage, res: ServerResponse, path: string, search: string): boolean;
  /** Ends long polls and MCP streams, marks `/readyz` not ready, and waits (bounded by `drainTimeoutMs`) for requests in flight. */
  drain(): Promise<void>;
  /** Admin requests refused for a missing or wrong admin key since start. */
  readonly adminAuthFailures: number;
}

export { DEFAULT_MAX_BODY_BYTES };
/** Ten minutes: how long a confirmation-page session lasts unless configured otherwise. */
export const DEFAULT_SESSION_TTL_SECONDS = 600;
const TRPC_PREFIX = "/trpc/";
const MCP_PATH = "/mcp";
/** Where each route lives, for a 404 that says so. */
export const ROUTES_HINT = "the API is at /trpc, MCP at /mcp, the confirmation page at /confirm/, health at /healthz and /readyz";

/**
 * toolpact's routes: tRPC under `/trpc/`, MCP at `/mcp`, the confirmation page under `/confirm/`,
 * `GET /healthz` and `/readyz`, with the body limit, one call per request, and each route's own
 * content-type and cross-site checks. The standalone server and the handlers an app mounts all serve these.
 * `mountPath` is where a mount serves them (e.g. `/toolpact`): without a `publicUrl`, the confirmation
 * session cookie's `Path` starts with it. `mounted`: an app's handler, on the app's origin unless
 * `confirmationOrigin` says otherwise.
 */
export function createToolpactRoutes(options: ToolpactRoutesOptions, mountPath = "", mounted = false): ToolpactRoutes {
  const runtime = options.runtime;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const bodyLimits = { maxBytes: maxBodyBytes, maxDepth: options.maxBodyDepth ?? DEFAULT_MAX_BODY_DEPTH };
  const admit = createCallerAdmission({
    maxRequests: options.maxRequestsPerCaller ?? DEFAULT_MAX_REQUESTS_PER_CALLER,
    maxLongPolls: options.maxLongPollsPerCaller ?? DEFAULT_MAX_LONG_POLLS_PER_CALLER,
  });
  const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
  const logger = options.logger ?? silentLogger;
  const isAdminKey = createAdminKeyCheck(options.adminKey);
  const publicUrl = options.publicUrl === undefined ? undefined : new URL(options.publicUrl);
  const pageOrigin = confirmationOriginOf(options.confirmationOrigin, mounted);
  const sessions = createPresenceSessions({
    secret: options.sessionSecret ?? new Uint8Array(randomBytes(32)),
    ttlSeconds: options.sessionTtlSeconds ?? DEFAULT_SESSION_TTL_SECONDS,
    secure: (pageOrigin.kind === "dedicated" ? pageOrigin.origin.protocol : publicUrl?.protocol) === "https:",
    path: `${publicUrl === undefined ? mountPath : publicUrl.pathname.replace(/\/+$/, "")}${CONFIRM_PREFIX.slice(0, -1)}`,
    clock: Date.now,
  });
  const shutdownController = new AbortController();
  const shutdownSignal = shutdownController.signal;
  const presencePage = { sessions, publicHost: publicUrl?.host, origin: pageOrigin };
  const confirmationPage = createConfirmationPage({
    ...presencePage,
    runtime,
    logger,
    shutdown: shutdownSignal,
    ...(options.confirmationSignInHint === undefined ? {} : { signInHint: options.confirmationSignInHint }),
  });
  const mcp = createMcpHttpHandler({
    ...options.mcp,
    runtime,
    authenticate: (req) => runtime.authenticate(credentialsOf(req.headers)),
    maxBodyBytes,
    maxBodyDepth: bodyLimits.maxDepth,
    ...(publicUrl === undefined ? {} : { publicUrl }),
    shutdown: shutdownSignal,
    logger,
  });

  let closing = false;
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

  const isReady = async (): Promise<boolean> => {
    if (closing) return false;
    try {
      return await runtime.ready();
    } catch {
      return false;
    }
  };

  const serve = (req: IncomingMessage, res: ServerResponse, path: string, search: string): boolean => {
    const route = routeOf(path);
    if (route === undefined) return false;
    inFlight += 1;
    res.once("close", release);
    res.setHeader("x-content-type-options", "nosniff");
    res.setHeader("cache-control", "no-store");
    if (closing) res.setHeader("connection", "close");
    switch (route) {
      case "trpc": {
        const procedures = path.slice(TRPC_PREFIX.length);
        if (req.method !== "GET" && req.method !== "POST") return refuseMethod(req, res, procedures), true;
        const query = search.length > 1 ? new URLSearchParams(search.slice(1)) : undefined;
        if (query?.has("batch")) return refuseBatch(res, procedures), true;
        const oversized = Number(req.headers["content-length"] ?? 0) > maxBodyBytes;
        if (req.method === "POST" && !oversized && !isJson(req.headers["content-type"])) return refuseMediaType(req, res, procedures), true;
        const input = query?.get("input");
        if (input != null && isNestedDeeperThan(input, bodyLimits.maxDepth)) {
          const { message } = tooDeep(bodyLimits.maxDepth);
          return refuseInput(res, "BAD_REQUEST", message, procedures), true;
        }
        if (!admitCaller(req, res, procedures === "confirmations.wait", (message) => refuseRateLimited(req, res, message, procedures))) return true;
        // The tRPC handler reads the procedure from the URL: hand it the path without any mount prefix.
        req.url = `${TRPC_PREFIX}${procedures}${search}`;
        if (req.method === "GET") void trpc(req, res);
        else void readCallBody(req, res, bodyLimits, procedures).then((ok) => ok && trpc(req, res));
        return true;
      }
      case "mcp":
        if (!admitCaller(req, res, req.method === "GET", (message) => refuseMcpRateLimited(req, res, message))) return true;
        void mcp(req, res);
        return true;
      case "confirm":
        void confirmationPage(req, res, path);
        return true;
      case "healthz":
        plain(req, res, 200, "ok");
        return true;
      case "readyz":
        void isReady().then((ready) => plain(req, res, ready ? 200 : 503, ready ? "ready" : "not ready"));
        return true;
    }
  };

  /** Counts the request against its caller's bound (by plugin key; none presented, none counted), or refuses it. */
  const admitCaller = (req: IncomingMessage, res: ServerResponse, longPoll: boolean, refuse: (message: string) => void): boolean => {
    const key = bearerToken(req.headers.authorization);
    if (key === undefined) return true;
    const admission = admit(key, longPoll);
    if (!admission.ok) {
      refuse(admission.message);
      return false;
    }
    res.once("close", admission.release);
    return true;
  };

  const drain = (): Promise<void> => {
    closing = true;
    shutdownController.abort(new Error("the server is shutting down"));
    return new Promise((resolve) => {
      if (inFlight === 0) return resolve();
      const timer = setTimeout(resolve, drainTimeoutMs);
      timer.unref();
      onDrained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  };

  return {
    serve,
    drain,
    get adminAuthFailures() {
      return adminAuthFailures;
    },
  };
}

type Route = "trpc" | "mcp" | "confirm" | "healthz" | "readyz";

function routeOf(path: string): Route | undefined {
  if (path.startsWith(TRPC_PREFIX)) return "trpc";
  if (path === MCP_PATH) return "mcp";
  if (path.startsWith(CONFIRM_PREFIX)) return "confirm";
  if (path === "/healthz") return "healthz";
  if (path === "/readyz") return "readyz";
  return undefined;
}

/** A plain-text answer to GET or HEAD; any other method gets 405. */
export function plain(req: IncomingMessage, res: ServerResponse, status: number, text: string): void {
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
  refuseInput(res, "BAD_REQUEST", "batched requests are not accepted: send one call per request (tRPC's httpLink, not httpBatchLink)", procedures);
}

/** True for `application/json`, with or without parameters (`; charset=utf-8`). */
function isJson(contentType: string | undefined): boolean {
  return contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType);
}

/**
 * Answers 415 to a call whose body is not declared JSON, as a JSON error like every other refusal
 * (tRPC's own answer is text/plain and names no procedure); the body is read and dropped.
 */
function refuseMediaType(req: IncomingMessage, res: ServerResponse, procedures: string): void {
  const type = req.headers["content-type"];
  const given = type === undefined ? "no content-type" : `content-type "${type.slice(0, 100)}"`;
  refuseInput(res, "UNSUPPORTED_MEDIA_TYPE", `calls take a JSON body: send "content-type: application/json" (this request has ${given})`, procedures);
  req.resume();
}

/** A refusal of the request itself (INPUT_INVALID with one issue), closing the connection after it. */
function refuseInput(res: ServerResponse, trpcCode: "BAD_REQUEST" | "UNSUPPORTED_MEDIA_TYPE" | "METHOD_NOT_SUPPORTED", message: string, procedures: string): void {
  const shape = toErrorShape(
    { trpcCode, message, toolpactCode: "INPUT_INVALID", toolpactData: { issues: [{ path: "", message }] }, internal: false },
    procedures.slice(0, 200),
  );
  res.writeHead(shape.data.httpStatus, { "content-type": "application/json", connection: "close" });
  res.end(JSON.stringify({ error: shape }));
}

/** Answers 405 to a method `/trpc` does not serve (queries are GET, mutations POST), with `Allow`. */
function refuseMethod(req: IncomingMessage, res: ServerResponse, procedures: string): void {
  res.setHeader("allow", "GET, POST");
  refuseInput(res, "METHOD_NOT_SUPPORTED", `method ${String(req.method).slice(0, 20)} is not allowed here: queries use GET, mutations POST`, procedures);
  req.resume();
}

/** Answers 429 RATE_LIMITED with `Retry-After` to a caller past its bound; the body is read and dropped. */
function refuseRateLimited(req: IncomingMessage, res: ServerResponse, message: string, procedures: string): void {
  const shape = toErrorShape(
    { trpcCode: "TOO_MANY_REQUESTS", message, toolpactCode: "RATE_LIMITED", toolpactData: { retryAfterMs: RETRY_AFTER_SECONDS * 1000 }, internal: false },
    procedures.slice(0, 200),
  );
  res.writeHead(shape.data.httpStatus, { "content-type": "application/json", "retry-after": String(RETRY_AFTER_SECONDS) });
  res.end(JSON.stringify({ error: shape }));
  req.resume();
}

/** The same refusal on `/mcp`, as a JSON-RPC error. */
function refuseMcpRateLimited(req: IncomingMessage, res: ServerResponse, message: string): void {
  res.writeHead(429, { "content-type": "application/json", "retry-after": String(RETRY_AFTER_SECONDS) });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: `RATE_LIMITED: ${message}` }, id: null }));
  req.resume();
}
