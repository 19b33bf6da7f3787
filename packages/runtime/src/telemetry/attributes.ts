/**
 * The attribute names on the runtime's spans and metrics: the OpenTelemetry GenAI and MCP semantic
 * conventions where one fits, `toolpact.*` for the rest. Values are ids, names and codes: never input or
 * output, never a token or key, never who the user is.
 */
export const ATTR = {
  /** `execute_tool` on an execute's span (GenAI). */
  operationName: "gen_ai.operation.name",
  /** The tool, `<provider>:<name>` (GenAI). */
  toolName: "gen_ai.tool.name",
  /** `tools/call` when the call came through the MCP bridge (MCP). */
  mcpMethod: "mcp.method.name",
  /** The MCP request's JSON-RPC id (MCP). */
  jsonrpcRequestId: "jsonrpc.request.id",
  /** The error code a refused or failed call answered. */
  errorType: "error.type",
  provider: "toolpact.provider",
  caller: "toolpact.caller",
  tenant: "toolpact.tenant",
  effect: "toolpact.effect",
  version: "toolpact.tool.version",
  phase: "toolpact.phase",
  /** `http`, `mcp` or `in-process`. */
  via: "toolpact.via",
  operationId: "toolpact.operation.id",
  /** `succeeded`, `failed`, `unknown`, `denied` or `previewed`. */
  outcome: "toolpact.outcome",
  refusalCode: "toolpact.refusal.code",
  /** `token` or `platform`, when the call needs a confirmation. */
  confirmationMode: "toolpact.confirmation.mode",
  /** The gate that answered the call instead of its provider. */
  answeredBy: "toolpact.answered_by",
  /** Which commit a store metric is about (`begin`, `settle`, `record`, `activity`, `confirmation`). */
  storeOperation: "toolpact.store.operation",
  /** How a confirmation request was decided (`approved`, `denied`, `expired`, `cancelled`). */
  decision: "toolpact.confirmation.decision",
} as const;
