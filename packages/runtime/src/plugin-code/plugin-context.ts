import type { Effect, ToolCallContext, ToolExecuteContext } from "@toolpact/contract";
import type { Principal } from "../api.js";
import type { SeamContext } from "../seams.js";
import type { CallTraceContext } from "../telemetry/trace-context.js";
import type { CallAbort } from "./call-scope.js";

/** What a piece of plugin code is told about the call it runs for. */
export interface ContextAbout {
  readonly principal: Principal;
  /** The tool's full name. */
  readonly tool: string;
  readonly phase: "preview" | "execute";
  /** A provider's context names the tool's effect; a gate's, hook's or guard's does not. */
  readonly effect?: Effect;
  /** An execute's, hook's or guard's context names the operation (authorize, preview and gates run before it exists). */
  readonly operationId?: string | undefined;
  /** A provider's context carries the trace it runs in, to pass on to what it calls. */
  readonly trace?: CallTraceContext | undefined;
}

/**
 * The one place plugin code's frozen context is made: a provider's (authorize, preview, execute) and a
 * gate's, hook's or guard's. `signal` is made only when read (most code never does).
 */
export function pluginContext(
  about: ContextAbout & { readonly effect: Effect; readonly phase: "execute"; readonly operationId: string },
  abort: CallAbort,
): ToolExecuteContext;
export function pluginContext(about: ContextAbout & { readonly effect: Effect }, abort: CallAbort): ToolCallContext;
export function pluginContext(about: ContextAbout, abort: CallAbort): SeamContext;
export function pluginContext(about: ContextAbout, abort: CallAbort): SeamContext | ToolCallContext {
  const { principal, effect, operationId } = about;
  const ctx: { -readonly [K in keyof SeamContext]: SeamContext[K] } & { effect?: Effect; traceparent?: string; tracestate?: string } = {
    tenantId: principal.tenantId,
    actor: principal.actor,
    callerPluginId: principal.callerPluginId,
    tool: about.tool,
    phase: about.phase,
    get signal() {
      return abort.signal;
    },
  };
  if (effect !== undefined) ctx.effect = effect;
  if (operationId !== undefined) ctx.operationId = operationId;
  const trace = about.trace;
  if (trace?.traceparent !== undefined) {
    ctx.traceparent = trace.traceparent;
    if (trace.tracestate !== undefined) ctx.tracestate = trace.tracestate;
  }
  return Object.freeze(ctx);
}
