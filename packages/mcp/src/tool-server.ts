/**
 * The MCP server the bridge runs per connection (a session, one stateless request, or stdio): `tools/list`
 * and `tools/call` over a `ToolBackend`, on the official SDK's `Server`.
 */
import { createRequire } from "node:module";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolRequest,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { isToolpactError } from "@toolpact/contract";
import type { Logger } from "@toolpact/runtime";
import { callTool } from "./call-tool.js";
import { DEFAULT_WAIT_ROUND_MS, type CallChannel } from "./confirmation-flow.js";
import type { ToolBackend } from "./tool-backend.js";
import { traceContextOfRequest } from "./trace-context.js";
import { DEFAULT_PAGE_SIZE, listPage } from "./tool-listing.js";
import { createToolDirectory } from "./tool-names.js";
import { CODE_META_KEY } from "./tool-results.js";

/** What a request handler of the bridge receives from the SDK. */
export type HandlerExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The backend a request acts through, and a signal for the request's connection going away. */
export interface CallScope {
  readonly backend: ToolBackend;
  /** Aborts when the HTTP request carrying the call closed before its answer (the client hung up). */
  readonly hangup?: AbortSignal;
}

/** Options of `createToolServer`. */
export interface ToolServerOptions {
  /** The scope of the request being handled (HTTP: its principal; stdio: the one remote backend). */
  readonly scopeOf: (extra: HandlerExtra) => CallScope;
  /** False when nothing can travel back to the client during a call (stateless HTTP): no elicitation then. */
  readonly canAskClient: boolean;
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
  "page; the call waits for the decision, and nothing runs unless the user approves. If the client cannot show the page, " +
  "the call fails with the page's URL: let the user open it and approve, then make the same call again.";

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
    { capabilities: { tools: { listChanged: true } }, instructions: INSTRUCTIONS, jsonSchemaValidator: noFormInput },
  );
  const connect = server.connect.bind(server);
  server.connect = (transport) => connect(withPlainErrorMessages(transport));
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const waitRoundMs = options.waitRoundMs ?? DEFAULT_WAIT_ROUND_MS;
  const { logger } = options;

  // Both handlers are registered by method alone and their params checked after: a failed parse at
  // registration would answer a malformed request with an internal error, not Invalid params (-32602).
  server.setRequestHandler(ListToolsRequestSchema.pick({ method: true }).loose(), async (loose, extra) => {
    const request = ListToolsRequestSchema.safeParse(loose);
    if (!request.success) throw new McpError(ErrorCode.InvalidParams, `Invalid tools/list request: ${request.error.message}`);
    const { backend } = options.scopeOf(extra);
    const listing = await backend.listTools().catch((error: unknown) => {
      throw protocolError(error, logger, "tools/list");
    });
    return listPage(createToolDirectory(listing), request.data.params?.cursor, pageSize);
  });

  // The SDK's Server checks every call against CallToolRequestSchema before this runs (Invalid params
  // when malformed), so the request has that shape.
  server.setRequestHandler(CallToolRequestSchema.pick({ method: true }).loose(), async (checked, extra) => {
    const request = checked as CallToolRequest;
    const scope = options.scopeOf(extra);
    const trace = traceContextOfRequest(request.params._meta, extra.requestId);
    const backend = trace === undefined ? scope.backend : (scope.backend.withTrace?.(trace) ?? scope.backend);
    const progressToken = request.params._meta?.progressToken;
    const channel: CallChannel = {
      signal: scope.hangup === undefined ? extra.signal : AbortSignal.any([extra.signal, scope.hangup]),
      ...(progressToken === undefined ? {} : { progressToken }),
      urlElicitation: options.canAskClient && server.getClientCapabilities()?.elicitation?.url !== undefined,
      notify: (notification) => extra.sendNotification(notification),
      elicitUrl: (params, { signal, timeout }) => extra.sendRequest({ method: "elicitation/create", params }, ElicitResultSchema, { signal, timeout }),
    };
    try {
      return await callTool({ name: request.params.name, arguments: request.params.arguments, backend, channel, waitRoundMs, logger });
    } catch (error) {
      if (error instanceof McpError) throw error;
      throw protocolError(error, logger, "tools/call");
    }
  });
  return server;
}

/**
 * The SDK's `McpError` writes "MCP error <code>: " before its message, and its server sends that message
 * as it is; the client SDK prefixes what it receives again ("MCP error -32602: MCP error -32602: ..."). So
 * every error answer leaves this server with the message alone, whoever threw it (this bridge or the SDK).
 */
function withPlainErrorMessages(transport: Transport): Transport {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (!("error" in message) || typeof message.error.message !== "string") return send(message, options);
    const prefix = `MCP error ${message.error.code}: `;
    if (!message.error.message.startsWith(prefix)) return send(message, options);
    return send({ ...message, error: { ...message.error, message: message.error.message.slice(prefix.length) } }, options);
  };
  return transport;
}

/** A failure that is not a tool's answer, as a JSON-RPC error: toolpact's code and message, or a generic one. */
function protocolError(error: unknown, logger: Logger, method: string): McpError {
  if (isToolpactError(error)) return new McpError(ErrorCode.InternalError, `${error.code}: ${error.message}`, { [CODE_META_KEY]: error.code });
  logger.error({ event: "mcp_request_failed_unexpectedly", method, errorClass: (error as Error)?.constructor?.name ?? typeof error });
  return new McpError(ErrorCode.InternalError, "internal error: the request failed unexpectedly; the server log has the details");
}
