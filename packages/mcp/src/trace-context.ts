/**
 * The trace an MCP `tools/call` continues: `_meta.traceparent` and `_meta.tracestate` (W3C trace context,
 * as MCP clients that trace send it), with the request's JSON-RPC id for the call's span. Malformed values
 * are dropped, never refused.
 */
import { traceContextOf, type CallTraceContext } from "@toolpact/runtime";

/** The trace context of one MCP request, from its `_meta` and JSON-RPC id; undefined when there is none. */
export function traceContextOfRequest(meta: unknown, requestId: unknown): CallTraceContext | undefined {
  const fields = typeof meta === "object" && meta !== null ? (meta as Record<string, unknown>) : {};
  return traceContextOf(fields.traceparent, fields.tracestate, requestId);
}
