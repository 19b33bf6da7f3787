/**
 * W3C trace context as a call carries it in: a caller's `traceparent` and `tracestate` (HTTP headers, or an
 * MCP request's `_meta`), checked here once at the edge. What fails the check is dropped, never refused:
 * trace context is a hint for the operator's traces, never part of a decision.
 */

/** Where a call's trace continues from, and the transport's request id: for its spans only (never identity, never checked for access). */
export interface CallTraceContext {
  /** The caller's span, as a W3C `traceparent` (`00-<trace id>-<span id>-<flags>`). */
  readonly traceparent?: string;
  /** The caller's vendor trace state, as a W3C `tracestate` (only with a `traceparent`). */
  readonly tracestate?: string;
  /** The JSON-RPC id of the MCP request that made the call (`jsonrpc.request.id` on its span). */
  readonly jsonrpcRequestId?: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[^\s]*)?$/;
const ZERO_TRACE_ID = "0".repeat(32);
const ZERO_SPAN_ID = "0".repeat(16);
/** The W3C limit on `tracestate` that a vendor must still propagate; longer ones are dropped here. */
const TRACESTATE_MAX_LENGTH = 512;
const TRACESTATE = /^[\x20-\x7e]*$/;
/** A JSON-RPC request id longer than this is not recorded. */
const REQUEST_ID_MAX_LENGTH = 128;

/** The parts of a valid `traceparent`. */
export interface ParsedTraceparent {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
}

/**
 * A `traceparent` as the W3C spec reads it: version `00` exactly as specified, a later version by its first
 * four fields; version `ff`, an all-zero trace or span id, or upper-case hex are invalid.
 */
export function parseTraceparent(value: unknown): ParsedTraceparent | undefined {
  if (typeof value !== "string" || value.length > 256) return undefined;
  const match = TRACEPARENT.exec(value);
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
}

/** A `traceparent` (version `00`) for a span. */
export function formatTraceparent(span: ParsedTraceparent): string {
  return `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/**
 * The trace context a call arrived with, from untrusted `traceparent`, `tracestate` and request id values
 * (headers or `_meta`); undefined when there is nothing valid to keep. A `tracestate` without a valid
 * `traceparent` is dropped, as the W3C spec says.
 */
export function traceContextOf(traceparent: unknown, tracestate?: unknown, jsonrpcRequestId?: unknown): CallTraceContext | undefined {
  const context: { traceparent?: string; tracestate?: string; jsonrpcRequestId?: string } = {};
  if (parseTraceparent(traceparent) !== undefined) {
    context.traceparent = traceparent as string;
    if (typeof tracestate === "string" && tracestate.length > 0 && tracestate.length <= TRACESTATE_MAX_LENGTH && TRACESTATE.test(tracestate)) {
      context.tracestate = tracestate;
    }
  }
  if ((typeof jsonrpcRequestId === "string" && jsonrpcRequestId.length <= REQUEST_ID_MAX_LENGTH) || Number.isSafeInteger(jsonrpcRequestId)) {
    context.jsonrpcRequestId = String(jsonrpcRequestId);
  }
  return context.traceparent === undefined && context.jsonrpcRequestId === undefined ? undefined : Object.freeze(context);
}
