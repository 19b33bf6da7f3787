/**
 * The MCP server inside an isolated provider's child: `tools/list` names each tool the plugin provided
 * (with which handler functions it has), `tools/call` runs the function the call names (`run`), with the
 * context the host sent and the abort signal of MCP cancellation. What a handler threw goes back as an error
 * result: a ToolpactError with its code and message, anything else by its class name only.
 */
import { Server, type CallToolResult, type ServerContext } from "@modelcontextprotocol/server";
import { isToolpactError, ToolpactError } from "@toolpact/contract";
import type { RecordedHandler } from "./child-sdk.js";
import { CALL_META_KEY, HANDLER_META_KEY, THROWN_META_KEY, type HandlerShape, type ThrownOnWire, type ToolCallContextOnWire } from "./wire.js";

const CLASS_NAME = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/;

/** An MCP server serving the handlers an isolated plugin provided. Connect it to one transport. */
export function createChildServer(pluginId: string, provided: ReadonlyMap<string, RecordedHandler>): Server {
  const server = new Server({ name: `toolpact-isolated:${pluginId}`, version: "1" }, { capabilities: { tools: {} } });
  server.setRequestHandler("tools/list", () => ({
    tools: [...provided].map(([name, handler]) => {
      const shape: HandlerShape = { preview: handler.preview !== undefined, authorize: handler.authorize !== undefined };
      return { name, inputSchema: { type: "object" as const }, _meta: { [HANDLER_META_KEY]: shape } };
    }),
  }));
  server.setRequestHandler("tools/call", async (request, ctx) => {
    const handler = provided.get(request.params.name);
    const about = (ctx.mcpReq._meta ?? request.params._meta)?.[CALL_META_KEY] as ToolCallContextOnWire | undefined;
    if (handler === undefined || typeof about !== "object" || about === null) {
      return thrown(new ToolpactError("TOOL_NOT_FOUND", `this child of "${pluginId}" serves no tool "${request.params.name}", or the call has no context`));
    }
    try {
      return answered(await run(handler, about, request.params.arguments?.input, ctx));
    } catch (error) {
      return thrown(error);
    }
  });
  return server;
}

function run(handler: RecordedHandler, about: ToolCallContextOnWire, input: unknown, ctx: ServerContext): unknown {
  const context = Object.freeze({ ...contextOf(about), signal: ctx.mcpReq.signal });
  switch (about.run) {
    case "authorize":
      return handler.authorize?.call(handler.self, input, context) ?? true;
    case "preview":
      if (handler.preview === undefined) throw new ToolpactError("HANDLER_INVALID", "this tool's handler has no preview");
      return handler.preview.call(handler.self, input, context);
    default:
      return handler.execute.call(handler.self, input, context as typeof context & { operationId: string; phase: "execute" });
  }
}

/** The context plugin code sees: the fields of `ToolCallContext` (and `operationId` for execute), nothing else the host sent. */
function contextOf(about: ToolCallContextOnWire) {
  const { tenantId, actor, callerPluginId, tool, effect, operationId, traceparent, tracestate } = about;
  const phase = about.phase === "execute" ? "execute" : "preview";
  return {
    tenantId,
    actor: Object.freeze({ ...actor, roles: Object.freeze([...(actor?.roles ?? [])]) }),
    callerPluginId,
    tool,
    effect,
    phase,
    ...(operationId === undefined ? {} : { operationId }),
    ...(traceparent === undefined ? {} : { traceparent }),
    ...(tracestate === undefined ? {} : { tracestate }),
  } as const;
}

/** A handler's answer as JSON; one that is not JSON says so (the host's checks then refuse it as they would in process). */
function answered(answer: unknown): CallToolResult {
  if (answer === undefined) return { content: [], structuredContent: {} };
  let copy: unknown;
  try {
    copy = JSON.parse(JSON.stringify(answer)) as unknown;
  } catch {
    return { content: [], structuredContent: { notJson: true } };
  }
  return { content: [], structuredContent: { answer: copy } };
}

function thrown(error: unknown): CallToolResult {
  const wire: ThrownOnWire = isToolpactError(error)
    ? { errorClass: "ToolpactError", code: error.code, message: error.message }
    : { errorClass: classOf(error) };
  return { content: [{ type: "text", text: wire.message ?? wire.errorClass }], isError: true, _meta: { [THROWN_META_KEY]: wire } };
}

function classOf(error: unknown): string {
  if (error === null || error === undefined) return "Null";
  if (typeof error !== "object" && typeof error !== "function") return typeof error;
  try {
    const name = (error as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === "string" && CLASS_NAME.test(name) ? name : "Error";
  } catch {
    return "Error";
  }
}
