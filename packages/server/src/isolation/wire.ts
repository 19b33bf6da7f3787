/**
 * What an isolated provider's child and its host say to each other over MCP stdio, beyond plain MCP: the
 * call's context in a request's `_meta`, which handlers each tool has in `tools/list`, and how an answer or
 * an error travels back. One home for both sides; the host reads everything the child sends as untrusted.
 */
import type { ActorInfo, Effect } from "@toolpact/contract";

/** `_meta` key of a `tools/call` request: the call's context (`ToolCallContextOnWire`). */
export const CALL_META_KEY = "toolpact/call";
/** `_meta` key of a tool in `tools/list`: which of its handler's functions the child has (`HandlerShape`). */
export const HANDLER_META_KEY = "toolpact/handler";
/** `_meta` key of an error result: what the handler threw (`ThrownOnWire`). */
export const THROWN_META_KEY = "toolpact/thrown";

/** Which function of a tool's handler a call runs. */
export type HandlerFunction = "authorize" | "preview" | "execute";

/** The context of one call, as the host sends it; the child freezes it and adds the abort signal of MCP cancellation. */
export interface ToolCallContextOnWire {
  /** The handler's function to run. */
  readonly run: HandlerFunction;
  /** The call's phase, as `ctx.phase` shows it (an authorize runs in either). */
  readonly phase: "preview" | "execute";
  readonly tenantId: string;
  readonly actor: ActorInfo;
  readonly callerPluginId: string;
  /** The tool's full name, `<pluginId>:<name>@<version>`. */
  readonly tool: string;
  readonly effect: Effect;
  /** Set for `execute`. */
  readonly operationId?: string;
  readonly traceparent?: string;
  readonly tracestate?: string;
}

/** Which optional functions a provided handler has (`execute` it always has). */
export interface HandlerShape {
  readonly preview: boolean;
  readonly authorize: boolean;
}

/** What a handler threw: a ToolpactError keeps its code and message; anything else only its class name. */
export interface ThrownOnWire {
  /** The class name, as the activity log records it (`errorClassOf`). */
  readonly errorClass: string;
  /** Set when a ToolpactError was thrown. */
  readonly code?: string;
  readonly message?: string;
}

/** The `structuredContent` of a successful call: the handler's answer (absent when it answered undefined). */
export interface AnswerOnWire {
  readonly answer?: unknown;
}
