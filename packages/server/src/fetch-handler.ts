/**
 * toolpact's routes as one Fetch handler, `Request -> Response`: the core that the standalone server, the
 * Node handler an app mounts (both through `node-adapter.ts`) and the Fetch handler an app mounts all serve.
 */
import { randomBytes } from "node:crypto";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import {
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_BODY_DEPTH,
  DEFAULT_MAX_LONG_POLLS_PER_CALLER,
  DEFAULT_MAX_REQUESTS_PER_CALLER,
  isNestedDeeperThan,
  tooDeep,
  whenAnswerOver,
} from "@toolpact/contract";
import { createMcpHttpHandler, type McpHttpOptions } from "@toolpact/mcp";
import type { Principal, Runtime } from "@toolpact/runtime";
import { withCommonHeaders } from "./common-headers.js";
import type { ConfirmationLoginOptions } from "./confirmation-login.js";
import { loginOf } from "./confirmation-login-wiring.js";
import { confirmationOriginOf } from "./confirmation-origin.js";
import { createConsoleRoute, type ConsoleRouteOptions } from "./console/console-route.js";
import { CONFIRM_PREFIX, CSRF_HEADER, createConfirmationPage, headerRecord, requirePresence } from "./confirmation-page.js";
import { createCallerAdmission } from "./caller-admission.js";
import { createAdminKeyCheck, credentialsOf } from "./credentials.js";
import { describeInternalError, toPublicError } from "./errors.js";
import { silentLogger, type Logger } from "./logger.js";
import { createCallerAuthentication } from "./oauth/caller-authentication.js";
import { type OAuthConfigInput, parseOAuthConfig } from "./oauth/oauth-config.js";
import { createOAuthResponses } from "./oauth/oauth-responses.js";
import { createResourceServer } from "./oauth/resource-server.js";
import { createPresenceSessions } from "./presence-session.js";
import { readCallBody } from "./request-body.js";
import { type Admitted, afterAdmission, type OptionalRoutes, type Route, routeOfPath, TRPC_PREFIX } from "./route-table.js";
import { appRouter, type ServerContext } from "./router.js";
import { plain, refuseBatch, refuseInput, refuseMcpRateLimited, refuseMediaType, refuseMethod, refuseRateLimited } from "./trpc-refusals.js";

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
  /**
   * Accept OAuth 2.1 access tokens besides plugin keys and actor tokens (`oauth` of toolpact.config.json;
   * docs/oauth.md): Protected Resource Metadata is served, and 401s point clients at it.
   */
  readonly oauth?: OAuthConfigInput;
  /**
   * Sign people in on the confirmation page at the platform's OpenID provider (authorization code +
   * PKCE); presence tokens are then refused unless `presenceTokens` is true. Needs `publicUrl` (or
   * `confirmationOrigin`): the provider sends the browser back to `<that>/confirm/<redirectPath>`.
   */
  readonly confirmationLogin?: ConfirmationLoginOptions;
  /** The MCP endpoint at `/mcp`: sessions on or off, idle and polling periods (see `createMcpHttpHandler`). */
  /** The operator console at `/console` (own server only, needs `adminKey`); absent: not served. */
  readonly console?: ConsoleRouteOptions;
  readonly mcp?: Pick<McpHttpOptions, "sessions" | "sessionIdleMs" | "toolsPollMs" | "maxSessionsPerCaller" | "waitRoundMs" | "pageSize" | "requestStateRoot">;
}

/**
 * How an adapter that writes the answer itself says when it is written (Node: the response's `close`):
 * the request counts as in flight until then, so closing waits for its bytes, not only for its answer.
 */
export type WrittenHook = (written: () => void) => void;

/** toolpact's routes as one Fetch handler, with the state a server or a mount needs to close it. */
export interface ToolpactRoutes {
  /**
   * Serves `path` (the request's path with any mount prefix removed; `search` its query, `?` included);
   * undefined when it is none of toolpact's routes.
   */
  serve(request: Request, path: string, search: string, written?: WrittenHook): Promise<Response> | undefined;
  /** True when `path` is one of toolpact's routes. */
  owns(path: string): boolean;
  /** Ends long polls and MCP streams, marks `/readyz` not ready, and waits (bounded by `drainTimeoutMs`) for requests in flight. */
  drain(): Promise<void>;
  /** Admin requests refused for a missing or wrong admin key since start. */
  readonly adminAuthFailures: number;
}

export { DEFAULT_MAX_BODY_BYTES };
/** Ten minutes: how long a confirmation-page session lasts unless configured otherwise. */
export const DEFAULT_SESSION_TTL_SECONDS = 600;
/** The procedures the admin key reaches (router.ts, `adminProcedure`). */
const ADMIN_PROCEDURES = /^(admin|outbox)\./;
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
  const sessionSecret = options.sessionSecret ?? new Uint8Array(randomBytes(32));
  const secure = (pageOrigin.kind === "dedicated" ? pageOrigin.origin.protocol : publicUrl?.protocol) === "https:";
  const pagePath = `${publicUrl === undefined ? mountPath : publicUrl.pathname.replace(/\/+$/, "")}${CONFIRM_PREFIX.slice(0, -1)}`;
  const sessions = createPresenceSessions({
    secret: sessionSecret,
    ttlSeconds: options.sessionTtlSeconds ?? DEFAULT_SESSION_TTL_SECONDS,
    secure,
    path: pagePath,
    clock: Date.now,
  });
  const login = loginOf(options.confirmationLogin, { pageOrigin, publicUrl, pagePath, secure, secret: sessionSecret });
  const consolePage = createConsoleRoute(options, { mounted, isAdminKey: (presented) => isConsoleAdmin(presented), publicUrl, logger });
  const shutdownController = new AbortController();
  const shutdownSignal = shutdownController.signal;
  const presencePage = { sessions, publicHost: publicUrl?.host, origin: pageOrigin, ...(login === undefined ? {} : { login }) };
  const confirmationPage = createConfirmationPage({
    ...presencePage,
    runtime,
    logger,
    shutdown: shutdownSignal,
    ...(options.confirmationSignInHint === undefined ? {} : { signInHint: options.confirmationSignInHint }),
  });
  const resourceServer = options.oauth === undefined ? undefined : createResourceServer(parseOAuthConfig(options.oauth), options.publicUrl);
  const callers = createCallerAuthentication(runtime, resourceServer, logger);
  const oauthResponses = resourceServer === undefined ? undefined : createOAuthResponses(resourceServer);
  const mcp = createMcpHttpHandler({
    ...options.mcp,
    runtime,
    authenticate: (request) => callers.authenticate(request.headers),
    ...(resourceServer === undefined
      ? {}
      : {
          oauthChallenges: {
            unauthenticated: (reason) => resourceServer.challenge(true, reason),
            insufficientScope: (scope) => resourceServer.insufficientScope(true, scope),
          },
        }),
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
  const release = (): void => {
    inFlight -= 1;
    if (inFlight === 0) onDrained?.();
  };

  /** The console's sign-in check: a wrong key counts as an admin authentication failure, like the API's. */
  const isConsoleAdmin = (presented: string | undefined): boolean => {
    if (isAdminKey(presented)) return true;
    adminAuthFailures += 1;
    logger.warn({ event: "admin_authentication_failed", reason: "wrong admin key on the console's sign-in", adminAuthFailures });
    return false;
  };

  const contextOf = (request: Request): ServerContext => {
    const credentials = credentialsOf(request.headers);
    let principal: Promise<Principal> | undefined;
    return {
      runtime,
      // Step 1 failures are counted and logged by the runtime (runtime.metrics.authFailures).
      authenticate: () => (principal ??= callers.authenticate(request.headers)),
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
      presence: async () => requirePresence(presencePage, headerRecord(request), request.headers.get(CSRF_HEADER) ?? undefined),
      shutdown: shutdownSignal,
    };
  };

  const onError = ({ error, path }: { error: unknown; path: string | undefined }): void => {
    if (toPublicError(error).internal) logger.error({ event: "request_failed_unexpectedly", path, ...describeInternalError(error) });
  };

  /**
   * One call through tRPC. tRPC reads the procedure from the URL (here without any mount prefix) and the
   * body through `text()`: it gets the request as it needs it, with the body already read under the limits.
   */
  const call = (request: Request, procedures: string, search: string, body: string | undefined): Promise<Response> => {
    const req = {
      url: `http://toolpact${TRPC_PREFIX}${procedures}${search}`,
      method: request.method,
      headers: request.headers,
      signal: request.signal,
      text: () => Promise.resolve(body ?? ""),
    } as Request;
    return fetchRequestHandler({
      endpoint: TRPC_PREFIX,
      req,
      router: appRouter,
      // One call per request: a batch would hold many 25 s long polls, or bundle calls past per-request limits.
      allowBatching: false,
      createContext: () => contextOf(request),
      onError,
      ...(oauthResponses === undefined ? {} : { responseMeta: ({ errors }) => oauthResponses.trpcMeta(errors, request.headers.has("authorization")) }),
    });
  };

  const serveCall = async (request: Request, procedures: string, search: string, admitted: () => void): Promise<Response> => {
    try {
      if (request.method === "GET") return await call(request, procedures, search, undefined);
      const body = await readCallBody(request, bodyLimits, procedures);
      if (!body.ok) return body.response;
      return await call(request, procedures, search, body.text);
    } finally {
      admitted();
    }
  };

  const isReady = async (): Promise<boolean> => {
    if (closing) return false;
    try {
      return await runtime.ready();
    } catch {
      return false;
    }
  };

  const route = (request: Request, to: Route, path: string, search: string): Promise<Response> | Response => {
    const method = request.method;
    switch (to) {
      case "trpc": {
        const procedures = path.slice(TRPC_PREFIX.length);
        if (method !== "GET" && method !== "POST") return refuseMethod(method, procedures);
        const query = search.length > 1 ? new URLSearchParams(search.slice(1)) : undefined;
        if (query?.has("batch")) return refuseBatch(procedures);
        const oversized = Number(request.headers.get("content-length") ?? 0) > maxBodyBytes;
        const type = request.headers.get("content-type");
        if (method === "POST" && !oversized && !isJson(type)) return refuseMediaType(type, procedures);
        const input = query?.get("input");
        if (input != null && isNestedDeeperThan(input, bodyLimits.maxDepth)) {
          return refuseInput("BAD_REQUEST", tooDeep(bodyLimits.maxDepth).message, procedures);
        }
        return afterAdmission(
          admitCaller(request, procedures === "confirmations.wait", ADMIN_PROCEDURES.test(procedures)),
          (message) => refuseRateLimited(message, procedures),
          (release) => serveCall(request, procedures, search, release),
        );
      }
      case "mcp": {
        return afterAdmission(admitCaller(request, method === "GET"), refuseMcpRateLimited, (release) => whenAnswerOver(mcp(request), request.signal, release));
      }
      case "confirm":
        return confirmationPage(request, path, search);
      case "oauth-metadata":
        return oauthResponses!.metadata(method);
      case "console":
        return consolePage === undefined ? plain(method, 404, "not found") : consolePage(request, path, search);
      case "healthz":
        return plain(method, 200, "ok");
      case "readyz":
        return isReady().then((ready) => plain(method, ready ? 200 : 503, ready ? "ready" : "not ready"));
    }
  };

  const serves: OptionalRoutes = { console: consolePage !== undefined, oauth: resourceServer !== undefined };
  const routeOf = (path: string): Route | undefined => routeOfPath(path, serves);

  const serve = (request: Request, path: string, search: string, written?: WrittenHook): Promise<Response> | undefined => {
    const to = routeOf(path);
    if (to === undefined) return undefined;
    inFlight += 1;
    const wasClosing = closing;
    let answer: Promise<Response>;
    try {
      answer = Promise.resolve(route(request, to, path, search));
    } catch (error) {
      answer = Promise.reject(error);
    }
    const answered = answer.then(
      (response) => withCommonHeaders(response, wasClosing),
      (error: unknown) => {
        logger.error({ event: "request_failed_unexpectedly", path, ...describeInternalError(error) });
        return plain("GET", 500, "internal error: the request failed unexpectedly; the server log has the details");
      },
    );
    if (written === undefined) return whenAnswerOver(answered, request.signal, release);
    written(release);
    return answered;
  };

  /** Counts the request against its caller's bound (by plugin key, or an OAuth caller's issuer, client and subject; none presented, none counted): its release, or the refusal's message. */
  const admitCaller = (request: Request, longPoll: boolean, admin = false): Admitted | Promise<Admitted> => {
    const key = callers.callerKey(request.headers, admin);
    if (key === undefined) return () => {};
    const admitKey = (callerKey: string): Admitted => {
      const admission = admit(callerKey, longPoll);
      return admission.ok ? admission.release : admission.message;
    };
    return typeof key === "string" ? admitKey(key) : key.then(admitKey);
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
    owns: (path) => routeOf(path) !== undefined,
    drain,
    get adminAuthFailures() {
      return adminAuthFailures;
    },
  };
}

/** True for `application/json`, with or without parameters (`; charset=utf-8`). */
function isJson(contentType: string | null): boolean {
  return contentType !== null && /^application\/json\s*(;|$)/i.test(contentType);
}
