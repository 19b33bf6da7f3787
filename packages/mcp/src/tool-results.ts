/**
 * `tools/call` results. A tool's output is `structuredContent` plus its JSON as text; a toolpact refusal
 * is `isError` with the code and message as text and in `_meta`, never with `structuredContent`: stock
 * SDK clients (1.32) validate it against the tool's `outputSchema` even on errors, and would throw instead
 * of showing the refusal (typescript-sdk issue 1943).
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { ExecuteResult, ToolpactError, ToolpactErrorCode } from "@toolpact/contract";

/** `_meta` key of a refusal's toolpact error code. */
export const CODE_META_KEY = "toolpact/code";
/** `_meta` key of the operation a result or refusal is about. */
export const OPERATION_META_KEY = "toolpact/operationId";
/** `_meta` key of the confirmation request a refusal is about. */
export const REQUEST_META_KEY = "toolpact/requestId";

/** The result of an executed call. */
export function outputResult(executed: ExecuteResult): CallToolResult {
  const { operationId, result } = executed;
  return {
    content: [{ type: "text", text: JSON.stringify(result) ?? "null" }],
    ...(isPlainObject(result) ? { structuredContent: result } : {}),
    _meta: { [OPERATION_META_KEY]: operationId },
  };
}

/** A toolpact refusal as a tool error: the model reads the text, programs read `_meta`. */
export function refusalResult(error: ToolpactError): CallToolResult {
  const issues = error.data.issues?.map((issue) => `\n- ${issue.path || "/"}: ${issue.message}`).join("") ?? "";
  return errorResult(error.code, `${error.message}${issues}`, {
    ...(error.data.operationId === undefined ? {} : { [OPERATION_META_KEY]: error.data.operationId }),
    ...(error.data.requestId === undefined ? {} : { [REQUEST_META_KEY]: error.data.requestId }),
  });
}

/** A tool error with a toolpact code and a message for people. */
export function errorResult(code: ToolpactErrorCode, message: string, meta: Record<string, string> = {}): CallToolResult {
  return {
    content: [{ type: "text", text: `${code}: ${message}` }],
    isError: true,
    _meta: { [CODE_META_KEY]: code, ...meta },
  };
}

/** A JSON object: not null, not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
