/**
 * The MCP server the bridge runs per connection or request (a 2025-11-25 session, one stateless request of
 * either revision, or stdio): `tools/list` and `tools/call` over a `ToolBackend`, on the official v2 SDK's
 * `Server`. The era the instance serves decides how a confirmation reaches the user: pushed URL
 * elicitation while the call waits (2025-11-25), or an `input_required` result the client retries (2026-07-28).
 */
import { createRequire } from "node:module";
import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type ElicitResult,
  type jsonSchemaValidator,
  type CallToolResult,
  type ServerContext,
  type Transport,
} from "@modelcontextprotocol/server";
import { isToolpactError } from "@toolpact/contract";
import type { Logger } from "@toolpact/runtime";
import { callTool } from "./call-tool.js";
import { DEFAULT_WAIT_ROUND_MS, type CallChannel } from "./confirmation-flow.js";
import { APPROVAL_INPUT_KEY } from "./input-required-approval.js";
import type { RequestStateCodec } from "./request-state.js";
import type { ToolBackend } from "./tool-backend.js";
import { traceContextOfRequest } from "./trace-context.js";
import { DEFAULT_PAGE_SIZE, listPage } from "./tool-listing.js";
import { createToolDirectory } from "./tool-names.js";
import { CODE_META_KEY } from "./tool-results.js";
import { TASKS_EXTENSION, registerTaskMethods, startTask, type TaskBackend } from "./tool-tasks.js";

/** What a request handler of the bridge receives from the SDK. */
export type HandlerExtra = ServerContext;

/** The protocol era an instance serves: `legacy` up to 2025-11-25 (initialize, sessions), `modern` from 2026-07-28. */
export type Era = "legacy" | "modern";

/** The backend a request acts through, and a signal for the request's connection going away. */
export interface CallScope {
  readonly backend: ToolBackend;
  /** Aborts when the HTTP request carrying the call closed before its answer (the client hung up). */
  readonly hangup?: AbortSignal;
  /** The caller's tasks, where this server offers them (`ToolServerOptions.tasks`). */
  readonly tasks?: TaskBackend;
}

/** Options of `createToolServer`. */
export interface ToolServerOptions {
  /** The scope of the request being handled (HTTP: its principal; stdio: the one remote backend). */
  readonly scopeOf: (extra: HandlerExtra) => CallScope;
  /** False when nothing can travel back to the client during a call (stateless HTTP): no elicitation then. */
  readonly canAskClient: boolean;
  /** The era this instance serves; default legacy. */
  readonly era?: Era;
  /** Offers MCP tasks (io.modelcontextprotocol/tasks) to 2026-07-28 clients; every scope then carries `tasks`. Default false. */
  readonly tasks?: boolean;
  /** Mints and checks the `requestState` of 2026-07-28 approvals. */
  readonly requestState: RequestStateCodec;
  /** How long one confirmation wait round lasts, ms (progress is reported after each); default 10 s. */
  readonly waitRoundMs?: number;
  /** Tools per `tools/list` page; default 100. */
  readonly pageSize?: number;
  readonly logger: Logger;
}

const { version } = createRequire(import.meta.url)("../package.json") as { version: string };

/** Instructions the server hands MCP clients at initialization. */
export const INSTRUCTIONS =
  "These are toolpact tools: each call acts for the signed-in user, within what the tenant's policy allows, and is recorded. " +
  "A tool that changes data or acts outside the platform may ask the user to approve the call on toolpact's confirmation " +
  "page, and nothing runs unless the user approves there: the call either waits for the decision or answers with the page " +
  "to show the user and a state to retry with. If the client cannot show the page, the call fails with the page's URL: " +
  "let the user open it and approve, then make the same call again with the same arguments.";

/**
 * The bridge never validates client-supplied schemas (it asks for no form input), so the SDK's default
 * (an Ajv instance per server, costly per stateless request) is replaced by one that says so.
 */
const noFormInput: jsonSchemaValidator = {
  getValidator() {
    throw new Error("toolpact's MCP bridge asks clients for no form input, so it validates no client schemas");
  },
};

/** An MCP server offering the tools of the request's caller and user. Connect it to one transport. */
export function createToolServer(options: ToolServerOptions): Server {
  const server = new Server(
    { name: "toolpact", title: "toolpact", version },
    {
      capabilities: {
        tools: { listChanged: true },
        ...(options.era === "modern" && options.tasks === true ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
      },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: noFormInput,
      // A tool list changes with the tenant's policy, its plugins and their versions, and differs per caller
      // and user: no client or shared cache may keep one (2026-07-28 cache hints).
      cacheHints: { "tools/list": { ttlMs: 0, cacheScope: "private" }, "server/discover": { ttlMs: 0, cacheScope: "private" } },
      // Confirmations are this bridge's own loop on 2025-era connections (it waits and reports progress).
      inputRequired: { legacyShim: false },
    },
  );
  const era = options.era ?? "legacy";
  const connect = server.connect.bind(server);
  server.connect = (transport) => connect(withPlainErrorMessages(transport));
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const waitRoundMs = options.waitRoundMs ?? DEFAULT_WAIT_ROUND_MS;
  const { logger } = options;

  // The SDK checks each request's params against the method's schema before these run (Invalid params, -32602).
  server.setRequestHandler("tools/list", async (request, ctx) => {
    const cursor = request.params?.cursor;
    const { backend } = options.scopeOf(ctx);
    const listing = await backend.listTools().catch((error: unknown) => {
      throw protocolError(error, logger, "tools/list");
    });
    return listPage(createToolDirectory(listing), cursor, pageSize);
  });

  server.setRequestHandler("tools/call", async (request, ctx) => {
    const scope = options.scopeOf(ctx);
    const trace = traceContextOfRequest(request.params._meta, ctx.mcpReq.id);
    const backend = trace === undefined ? scope.backend : (scope.backend.withTrace?.(trace) ?? scope.backend);
    const progressToken = request.params._meta?.progressToken;
    // Made on first use: only a call that waits or retries reads it (a call that runs at once never does).
    let signal: AbortSignal | undefined;
    const channel: CallChannel = {
      get signal() {
        return (signal ??= scope.hangup === undefined ? ctx.mcpReq.signal : AbortSignal.any([ctx.mcpReq.signal, scope.hangup]));
      },
      ...(progressToken === undefined ? {} : { progressToken }),
      era,
      urlElicitation: era === "modern" ? declaresUrlInput(ctx) : options.canAskClient && server.getClientCapabilities()?.elicitation?.url !== undefined,
      requestState: era === "modern" ? rawRequestState(ctx) : undefined,
      approvalAnswer: era === "modern" ? approvalAnswerOf(ctx) : undefined,
      stateCodec: options.requestState,
      notify: (notification) => ctx.mcpReq.notify(notification),
      elicitUrl: (params, { signal, timeout }) => ctx.mcpReq.elicitInput(params, { signal, timeout }) as Promise<ElicitResult>,
    };
    try {
      if (era === "modern" && scope.tasks !== undefined) {
        const started = await startTask(scope.tasks, backend, request.params, ctx);
        if (started !== undefined) return started as CallToolResult;
      }
      return await callTool({ name: request.params.name, arguments: request.params.arguments, backend, channel, waitRoundMs, logger });
    } catch (error) {
      if (error instanceof ProtocolError) throw error;
      throw protocolError(error, logger, "tools/call");
    }
  });
  if (era === "modern" && options.tasks === true) {
    registerTaskMethods(server, {
      tasksOf: (ctx) => {
        const tasks = options.scopeOf(ctx).tasks;
        if (tasks === undefined) throw new ProtocolError(ProtocolErrorCode.InternalError, "tasks are not offered on this connection");
        return tasks;
      },
      logger,
    });
  }
  return server;
}

/**
 * Error answers as clients expect them, whoever threw (this bridge or the SDK): the message alone, without
 * an "MCP error <code>: " prefix a client SDK would prefix again; and params the SDK's own schema check
 * refused (it answers those as an internal error, -32603, with the schema issues as JSON) as Invalid
 * params (-32602) naming each field.
 */
function withPlainErrorMessages(transport: Transport): Transport {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (!("error" in message) || typeof message.error.message !== "string") return send(message, options);
    const prefix = `MCP error ${message.error.code}: `;
    const text = message.error.message.startsWith(prefix) ? message.error.message.slice(prefix.length) : message.error.message;
    const issues = message.error.code === ProtocolErrorCode.InternalError ? schemaIssuesOf(text) : undefined;
    const error = issues === undefined ? { ...message.error, message: text } : { code: ProtocolErrorCode.InvalidParams, message: `Invalid params: ${issues}` };
    return send({ ...message, error }, options);
  };
  return transport;
}

/** The issues of a schema check the SDK sent as a JSON array, as "path: message; ..."; undefined for any other text. */
function schemaIssuesOf(text: string): string | undefined {
  if (!text.startsWith("[")) return undefined;
  try {
    const issues = JSON.parse(text) as unknown;
    if (!Array.isArray(issues) || issues.length === 0) return undefined;
    const described = issues.map((issue: { path?: unknown; message?: unknown; code?: unknown }) =>
      typeof issue?.message === "string" && typeof issue.code === "string"
        ? `${Array.isArray(issue.path) ? issue.path.join(".") : ""}: ${issue.message}`
        : undefined,
    );
    return described.every((line) => line !== undefined) ? described.join("; ") : undefined;
  } catch {
    return undefined;
  }
}

/** A failure that is not a tool's answer, as a JSON-RPC error: toolpact's code and message, or a generic one. */
function protocolError(error: unknown, logger: Logger, method: string): ProtocolError {
  if (isToolpactError(error)) return new ProtocolError(ProtocolErrorCode.InternalError, `${error.code}: ${error.message}`, { [CODE_META_KEY]: error.code });
  logger.error({ event: "mcp_request_failed_unexpectedly", method, errorClass: (error as Error)?.constructor?.name ?? typeof error });
  return new ProtocolError(ProtocolErrorCode.InternalError, "internal error: the request failed unexpectedly; the server log has the details");
}

/** True when a 2026-07-28 request's envelope declares URL-mode elicitation among the client's capabilities. */
function declaresUrlInput(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, { elicitation?: { url?: unknown } } | undefined> | undefined;
  return envelope?.[CLIENT_CAPABILITIES_META_KEY]?.elicitation?.url !== undefined;
}

/** The client's answer to the approval's URL input request, as a 2026-07-28 retry carries it. */
function approvalAnswerOf(ctx: ServerContext): CallChannel["approvalAnswer"] {
  const answer = (ctx.mcpReq.inputResponses?.[APPROVAL_INPUT_KEY] as { action?: unknown } | undefined)?.action;
  return answer === "accept" || answer === "decline" || answer === "cancel" ? answer : undefined;
}

/** The `requestState` a 2026-07-28 retry echoes, as the client sent it (this bridge checks it itself). */
function rawRequestState(ctx: ServerContext): string | undefined {
  const state = ctx.mcpReq.requestState<unknown>();
  return typeof state === "string" ? state : undefined;
}
