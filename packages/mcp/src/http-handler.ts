/**
 * `/mcp`: MCP over Streamable HTTP for `toolpact serve`, both eras on one endpoint. A request that carries
 * the 2026-07-28 `_meta` envelope is answered statelessly by the v2 SDK's modern handler (no initialize, no
 * session; an unsupported version is answered with the supported ones). Any other (2025-era) request goes
 * the legacy way: with sessions (an initialize opens one) and without (a request that names no session is
 * answered on its own). Every request authenticates like the HTTP API (`Authorization: Bearer <plugin key>`,
 * `X-Toolpact-Actor`); a session belongs to the caller and user that opened it.
 */
import { randomUUID } from "node:crypto";
import {
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  PROTOCOL_VERSION_META_KEY,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
} from "@modelcontextprotocol/server";
import { DEFAULT_MAX_BODY_DEPTH, readBoundedRequest, whenAnswerOver, type BodyLimits } from "@toolpact/contract";
import { missingToolScope, type Principal, type Runtime, type Logger } from "@toolpact/runtime";
import { createHostCheck, refuse, refuseInsufficientScope, refuseUnauthenticated, TRANSPORT_ERROR, type OAuthChallenges } from "./http-guards.js";
import { createSessionRegistry } from "./http-sessions.js";
import { createRequestStateCodec } from "./request-state.js";
import { createRuntimeBackend } from "./tool-backend.js";
import { createToolLookup } from "./tool-lookup.js";
import { isPlainObject } from "./tool-results.js";
import { createToolServer, type CallScope, type Era, type HandlerExtra } from "./tool-server.js";
import { createRuntimeTasks } from "./tool-tasks.js";

/** Options of `createMcpHttpHandler`; every omitted one has a default. */
export interface McpHttpOptions {
  readonly runtime: Runtime;
  /** Step 1 for a request: the principal its credentials establish (the server reads the headers its way). */
  readonly authenticate: (request: Request) => Promise<Principal>;
  /** Largest request body, bytes. */
  readonly maxBodyBytes: number;
  /** Deepest nesting of a request body; default 128. Checked while the body streams in, before any parse. */
  readonly maxBodyDepth?: number;
  /** The address clients reach the server at: its host is accepted in `Host` and `Origin` besides loopback names. */
  readonly publicUrl?: string | URL;
  /** False answers every request on its own: no session ids (for several instances without sticky sessions). Default true. */
  readonly sessions?: boolean;
  /** A session nobody used for this long is closed, ms; default 30 minutes. */
  readonly sessionIdleMs?: number;
  /**
   * How often session clients' tool lists are compared for `notifications/tools/list_changed` when no
   * signal says a tenant's config changed, ms: while other instances cannot be heard; ten times as long
   * while they can. Default 15 s. Changes the runtime signals are compared at once.
   */
  readonly toolsPollMs?: number;
  /** Sessions one caller and user may hold at once; default 32. */
  readonly maxSessionsPerCaller?: number;
  /** How long one confirmation wait round lasts, ms (progress is reported after each); default 10 s. */
  readonly waitRoundMs?: number;
  /** Tools per `tools/list` page; default 100. */
  readonly pageSize?: number;
  /**
   * When toolpact is an OAuth resource server: the challenges of its 401s, and of the 403 that answers a
   * `tools/call` the access token's scopes do not grant (step-up, before anything runs).
   */
  readonly oauthChallenges?: OAuthChallenges;
  /**
   * The secret 2026-07-28 approval states are authenticated with a key derived from (HKDF, its own purpose):
   * every instance given the same root accepts every instance's states. Default: a random one per process.
   */
  readonly requestStateRoot?: Uint8Array;
  /** Ends every session when it aborts (the server is shutting down). */
  readonly shutdown?: AbortSignal;
  readonly logger: Logger;
}

/** The `/mcp` endpoint as a Fetch handler, `Request -> Response` (the MCP SDK's web-standard transport). */
export interface McpHttpHandler {
  (request: Request): Promise<Response>;
  /** Open sessions. */
  readonly sessionCount: number;
  /** Ends every session (pending confirmation waits are withdrawn); idempotent. */
  close(): Promise<void>;
}

/** The header a session travels in. */
const SESSION_HEADER = "mcp-session-id";
/** How long closing waits for calls to send the answer that says they ended, ms. */
const ANSWER_GRACE_MS = 3_000;

/** Makes the `/mcp` handler over a runtime. */
export function createMcpHttpHandler(options: McpHttpOptions): McpHttpHandler {
  const { runtime, logger } = options;
  const sessionsOn = options.sessions ?? true;
  const hostProblem = createHostCheck(options.publicUrl);
  const { waitRoundMs, pageSize } = options;
  const bodyLimits: BodyLimits = { maxBytes: options.maxBodyBytes, maxDepth: options.maxBodyDepth ?? DEFAULT_MAX_BODY_DEPTH };
  const scopeOf = (extra: HandlerExtra): CallScope => {
    const context = requestContextOf(extra.http?.authInfo);
    const { principal } = context;
    const correlationId = `mcp:${randomUUID()}`;
    const acting = Object.freeze({ ...principal, correlationId });
    return {
      backend: createRuntimeBackend(runtime, principal, correlationId),
      get hangup() {
        return context.hangup;
      },
      tasks: createRuntimeTasks(runtime, acting),
    };
  };
  const requestState = createRequestStateCodec(options.requestStateRoot);
  const toolServer = (canAskClient: boolean, era: Era = "legacy") =>
    createToolServer({
      scopeOf,
      canAskClient,
      era,
      tasks: era === "modern",
      requestState,
      logger,
      ...(waitRoundMs === undefined ? {} : { waitRoundMs }),
      ...(pageSize === undefined ? {} : { pageSize }),
    });
  const registry = createSessionRegistry({
    createServer: () => toolServer(true),
    listTools: (principal) => runtime.listTools(principal),
    toolChanges: runtime.toolChanges,
    idleMs: options.sessionIdleMs ?? 30 * 60_000,
    toolsPollMs: options.toolsPollMs ?? 15_000,
    maxPerOwner: options.maxSessionsPerCaller ?? 32,
    logger,
  });
  // 2026-07-28: a server per request, strict (2025-era requests never reach it: they are routed below).
  const modern = createMcpHandler(() => toolServer(false, "modern"), {
    legacy: "reject",
    maxRequestBodySize: options.maxBodyBytes,
    onerror: (error) => logger.warn({ event: "mcp_modern_request_refused", errorClass: error.constructor?.name ?? typeof error }),
  });
  // Closing first ends the calls that wait for a user (they answer that nothing ran), lets those answers
  // reach their clients, then ends the sessions and their streams.
  const stopping = new AbortController();
  const posts = new Set<Promise<void>>();
  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= (async () => {
      stopping.abort(new Error("the server is shutting down"));
      await Promise.race([Promise.allSettled([...posts]), new Promise((resolve) => setTimeout(resolve, ANSWER_GRACE_MS).unref())]);
      await Promise.all([registry.close(), modern.close()]);
    })());
  options.shutdown?.addEventListener("abort", () => void close(), { once: true });

  const handle = async (request: Request): Promise<Response> => {
    const problem = hostProblem(request.headers.get("host") ?? new URL(request.url).host, request.headers.get("origin") ?? undefined);
    if (problem !== undefined) return refuse(403, problem);
    const method = request.method;
    if (method !== "POST" && method !== "GET" && method !== "DELETE") {
      return refuse(405, "method not allowed: MCP uses POST, and GET and DELETE with a session", { allow: "GET, POST, DELETE" });
    }
    if (closed !== undefined) return refuse(503, "the server is shutting down: reconnect shortly", { connection: "close" });
    let principal: Principal;
    try {
      // Whatever the request says of itself, a call through /mcp is recorded as MCP.
      principal = Object.freeze({ ...(await options.authenticate(request)), via: "mcp" as const });
    } catch (error) {
      return refuseUnauthenticated(error, request.headers.has("authorization") || request.headers.has("x-toolpact-actor"), options.oauthChallenges);
    }
    const authInfo = authInfoOf(principal, request.signal, stopping.signal);

    const sessionId = request.headers.get(SESSION_HEADER);
    if (sessionId !== null) {
      const session = registry.get(sessionId, principal);
      if (session === undefined) return refuse(404, "Session not found: initialize a new session", {}, -32001);
      if (method === "GET") {
        let over: () => void = () => {};
        registry.holdStream(session, (listener) => {
          over = listener;
        });
        return whenAnswerOver(session.transport.handleRequest(request, { authInfo }), request.signal, () => over());
      }
      if (method !== "POST") return session.transport.handleRequest(request, { authInfo });
      const body = await readJsonBody(request, bodyLimits);
      if (!body.ok) return body.response;
      const stepUp = await scopeRefusal(principal, body.body);
      if (stepUp !== undefined) return stepUp;
      return answered(session.transport.handleRequest(request, { parsedBody: body.body, authInfo }), request);
    }
    if (method !== "POST") {
      return refuse(405, `${method} needs a session (the ${SESSION_HEADER} header of an initialized session)`, { allow: "POST" });
    }
    const body = await readJsonBody(request, bodyLimits);
    if (!body.ok) return body.response;
    const stepUp = await scopeRefusal(principal, body.body);
    if (stepUp !== undefined) return stepUp;
    if (carriesEnvelopeClaim(body.body) || !(await isLegacyRequest(request, body.body))) {
      return answered(modern.fetch(request, { parsedBody: body.body, authInfo }), request);
    }
    if (sessionsOn && isInitializeRequest(body.body)) {
      // Only a client that can be asked during a call (URL elicitation) ever receives anything before
      // a call's answer (the elicitation, progress): everyone else gets plain JSON answers.
      const stream = body.body.params.capabilities.elicitation?.url !== undefined;
      const session = await registry.open(principal, { stream });
      return answered(session.transport.handleRequest(request, { parsedBody: body.body, authInfo }), request);
    }
    // Stateless: a server and transport for this one request. Nothing can reach the client during the
    // call, so confirmations take the URL-elicitation-required path and JSON answers suffice.
    const server = toolServer(false);
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    return answered(transport.handleRequest(request, { parsedBody: body.body, authInfo }), request, () => {
      void transport.close();
      void server.close();
    });
  };

  /**
   * The 403 `insufficient_scope` for a `tools/call` of a tool the principal's access token has no scope
   * for (MCP authorization, step-up): answered over HTTP, before the call reaches the runtime.
   * The runtime refuses such a call too; this makes it the status a client re-authorizes on.
   */
  const scopeRefusal = async (principal: Principal, body: unknown): Promise<Response | undefined> => {
    const challenges = options.oauthChallenges;
    if (challenges === undefined || principal.scopes === undefined) return undefined;
    const names = (Array.isArray(body) ? body : [body]).flatMap((message) => {
      const { method, params } = (message ?? {}) as { method?: unknown; params?: { name?: unknown } };
      return method === "tools/call" && typeof params?.name === "string" ? [params.name] : [];
    });
    if (names.length === 0) return undefined;
    const { scopes: _scopes, ...unscoped } = principal;
    const tools = createToolLookup(createRuntimeBackend(runtime, unscoped));
    for (const name of names) {
      // A caller the runtime refuses outright (disabled, ...) is refused by the call itself, with its own code.
      const tool = await tools.find(name).catch(() => null);
      if (tool === null) return undefined;
      const scope = tool === undefined ? undefined : missingToolScope(principal, tool.effect);
      if (scope !== undefined) return refuseInsufficientScope(challenges, scope, name);
    }
    return undefined;
  };

  /** Counts a POST's answer as pending until it is over (closing waits for these), then runs `after`. */
  const answered = (answer: Promise<Response>, request: Request, after?: () => void): Promise<Response> => {
    let over!: () => void;
    const pending = new Promise<void>((resolve) => {
      over = resolve;
    });
    posts.add(pending);
    return whenAnswerOver(answer, request.signal, () => {
      posts.delete(pending);
      over();
      after?.();
    });
  };

  const handler = (request: Request): Promise<Response> =>
    handle(request).catch((error: unknown) => {
      logger.error({ event: "mcp_request_failed_unexpectedly", errorClass: (error as Error)?.constructor?.name ?? typeof error });
      return refuse(500, "internal error: the request failed unexpectedly; the server log has the details", {}, -32603);
    });
  return Object.assign(handler, {
    close,
    get sessionCount() {
      return registry.size;
    },
  });
}

/** What reading a request body gave: the parsed JSON, or the answer that refuses it. */
type BodyRead = { readonly ok: true; readonly body: unknown } | { readonly ok: false; readonly response: Response };

/**
 * Reads and parses a JSON body with its size and depth bounded while it streams in (nothing parses a
 * body past either limit). A refused one gets its answer at once (413 too large, 400 too deep) and the
 * rest is read and dropped so the client sees it, as `/trpc` does; an unparsable one gets -32700.
 */
async function readJsonBody(request: Request, limits: BodyLimits): Promise<BodyRead> {
  const read = await readBoundedRequest(request, limits, (refusal) => ({
    status: refusal.reason === "too-large" ? 413 : 400,
    json: JSON.stringify({ jsonrpc: "2.0", error: { code: TRANSPORT_ERROR, message: refusal.message }, id: null }),
  }));
  if (!read.ok) return read;
  try {
    return { ok: true, body: JSON.parse(read.text) };
  } catch {
    return { ok: false, response: refuse(400, "Parse error: the body is not JSON: send one JSON-RPC message (or a batch) as application/json", {}, -32700) };
  }
}

/** What the handler hands each MCP request through the SDK's `authInfo`. */
interface RequestContext {
  readonly principal: Principal;
  /** Aborts when the client hangs up or the server shuts down (the reason says which). */
  readonly hangup: AbortSignal;
}

/**
 * The `authInfo` of a request. Its `hangup` aborts when the client hangs up (`requestSignal`) or the server
 * shuts down; it is made on first use (only a call that waits reads it), and made then it has either's abort.
 */
function authInfoOf(principal: Principal, requestSignal: AbortSignal, shutdown: AbortSignal): AuthInfo {
  let hangup: AbortSignal | undefined;
  const context: RequestContext = {
    principal,
    get hangup() {
      return (hangup ??= AbortSignal.any([requestSignal, shutdown]));
    },
  };
  return { token: "toolpact-caller", clientId: principal.callerPluginId, scopes: [...(principal.scopes ?? [])], extra: { toolpact: context } };
}

/**
 * True for one JSON-RPC request or notification (not `initialize`, not a posted response) whose params carry
 * the 2026-07-28 envelope claim (`_meta` names a protocol version): `isLegacyRequest` answers false for every
 * such body (the modern handler answers it, or refuses a malformed one), so it is routed there without
 * classifying it twice. Anything else is left to `isLegacyRequest`.
 */
function carriesEnvelopeClaim(body: unknown): boolean {
  if (!isPlainObject(body) || typeof body.method !== "string" || body.method === "initialize" || "result" in body || "error" in body) return false;
  const meta = isPlainObject(body.params) ? body.params._meta : undefined;
  return isPlainObject(meta) && PROTOCOL_VERSION_META_KEY in meta;
}

function requestContextOf(authInfo: AuthInfo | undefined): RequestContext {
  const context = authInfo?.extra?.toolpact as RequestContext | undefined;
  if (context === undefined) throw new Error("an MCP request reached the bridge without the authenticated caller the handler attaches");
  return context;
}
