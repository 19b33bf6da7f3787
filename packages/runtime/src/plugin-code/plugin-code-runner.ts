import { AsyncLocalStorage } from "node:async_hooks";
import type { ToolCallContext, ToolExecuteContext } from "@toolpact/contract";
import type { Principal } from "../api.js";
import type { RegisteredTool } from "../registry.js";
import type { RegisteredSeam, SeamContext } from "../seams.js";
import type { CallSpan } from "../telemetry/call-span.js";
import type { CallTraceContext } from "../telemetry/trace-context.js";
import { CallAbort, type CallScope, type ScopeOwner } from "./call-scope.js";
import { pluginContext } from "./plugin-context.js";

/** What a timed-out invocation rejects with (never a value plugin code can throw). */
export const TIMED_OUT: unique symbol = Symbol("timed out");

const TIMEOUT_REASON = (ms: number) => Object.assign(new Error(`the tool did not finish within its timeout of ${ms} ms`), { name: "TimeoutError" });

/** How one piece of plugin code runs: for whom (when its plugin may call tools), how long, and what it aborts. */
export interface Invocation {
  /** The scope its caller methods act in; undefined for plugins without `tools:call` (no async context tracking). */
  readonly owner: ScopeOwner | undefined;
  readonly timeoutMs: number;
  readonly abort: CallAbort;
}

/** What a gate, hook or guard invocation is about. */
export interface SeamInvocation {
  readonly principal: Principal;
  /** The tool's full name. */
  readonly tool: string;
  readonly phase: "preview" | "execute";
  /** For hooks and guards (gates run before the operation exists). */
  readonly operationId: string | undefined;
}

/** What a provider invocation (authorize, preview, execute) is about: a call, as its steps see it. */
export interface ProviderInvocation {
  readonly principal: Principal;
  readonly tool: RegisteredTool;
  /** Whether the provider may call tools (then its code runs in the call's scope). */
  readonly provider: { readonly canCall: boolean };
  readonly phase: "preview" | "execute";
  readonly abort: CallAbort;
  /** The call's span, when traced: the provider's `ctx.traceparent` names the span it runs in. */
  readonly span: CallSpan | undefined;
}

/**
 * Runs plugin code (providers, gates, hooks, guards) for one runtime: each invocation under its timeout
 * and in a call scope of its own that ends with it, and everything still running abortable at close.
 */
export class PluginCodeRunner {
  /** The call plugin code runs inside: what its caller methods act for. */
  readonly scope = new AsyncLocalStorage<CallScope>();
  readonly #running = new Set<CallAbort>();

  /**
   * Runs `code` under the invocation's timeout, in a scope of its own (when `owner` is given) that ends
   * with it: settled, thrown or timed out, the scope turns inactive. A synchronous answer costs no timer;
   * a pending one races the timer, which aborts the signal when it fires and rejects with TIMED_OUT.
   * Never throws: a synchronous throw becomes a rejection.
   */
  #run<T>(invocation: Invocation, code: () => T | Promise<T>): Promise<T> {
    const { owner, timeoutMs, abort } = invocation;
    const scope = owner === undefined ? undefined : { tenantId: owner.tenantId, actor: owner.actor, correlationId: owner.correlationId, active: true };
    let pending: T | Promise<T>;
    try {
      pending = scope === undefined ? code() : this.scope.run(scope, code);
      if (!isThenable(pending)) {
        if (scope !== undefined) scope.active = false;
        return Promise.resolve(pending);
      }
    } catch (error) {
      if (scope !== undefined) scope.active = false;
      return Promise.reject(error);
    }
    this.#running.add(abort);
    return new Promise<T>((resolve, reject) => {
      const end = (): void => {
        clearTimeout(timer);
        this.#running.delete(abort);
        if (scope !== undefined) scope.active = false;
      };
      const timer = setTimeout(() => {
        end();
        abort.abort(TIMEOUT_REASON(timeoutMs));
        reject(TIMED_OUT);
      }, timeoutMs);
      try {
        pending.then(
          (value: T) => {
            end();
            resolve(value);
          },
          (error: unknown) => {
            end();
            reject(error);
          },
        );
      } catch (error) {
        end();
        reject(error);
      }
    });
  }

  /** Runs a provider's `authorize` or `preview` for a call, with its frozen context, under the tool's timeout. */
  runProvider<T>(call: ProviderInvocation, code: (ctx: ToolCallContext) => T | Promise<T>): Promise<T> {
    const { principal, tool, abort } = call;
    const ctx = pluginContext({ principal, tool: tool.fullName, phase: call.phase, effect: tool.declaration.effect, trace: traceOf(call) }, abort);
    return this.#runProvider(call, () => code(ctx));
  }

  /** Runs a provider's `execute` for a call's operation, with its frozen context, under the tool's timeout. */
  runExecute<T>(call: ProviderInvocation, operationId: string, code: (ctx: ToolExecuteContext) => T | Promise<T>): Promise<T> {
    const { principal, tool, abort } = call;
    const ctx = pluginContext({ principal, tool: tool.fullName, phase: "execute", effect: tool.declaration.effect, operationId, trace: traceOf(call) }, abort);
    return this.#runProvider(call, () => code(ctx));
  }

  #runProvider<T>(call: ProviderInvocation, code: () => T | Promise<T>): Promise<T> {
    return this.#run({ owner: ownerOf(call.principal, call.provider.canCall), timeoutMs: call.tool.declaration.timeoutMs, abort: call.abort }, code);
  }

  /** Runs one gate, hook or guard, with its frozen context, in the call's scope (when its plugin may call tools). */
  runSeam<T>(seam: RegisteredSeam<unknown>, about: SeamInvocation, code: (ctx: SeamContext) => T | Promise<T>): Promise<T> {
    const { principal } = about;
    const abort = new CallAbort();
    const ctx = pluginContext({ principal, tool: about.tool, phase: about.phase, operationId: about.operationId }, abort);
    return this.#run({ owner: ownerOf(principal, seam.canCall), timeoutMs: seam.timeoutMs, abort }, () => code(ctx));
  }

  /** Aborts every invocation still running (the runtime is closing and its drain timed out). */
  abortAll(reason: unknown): void {
    for (const abort of this.#running) abort.abort(reason);
  }
}

/**
 * Who plugin code acts for: only for plugins holding `tools:call`, the only ones whose caller methods can
 * act (skipping it spares every other call the cost of async context tracking).
 */
function ownerOf(principal: Principal, canCall: boolean): ScopeOwner | undefined {
  return canCall ? { tenantId: principal.tenantId, actor: principal.actor, correlationId: principal.correlationId } : undefined;
}

/** The trace a provider runs in: its step's span when traced, else the caller's trace passed through as it came. */
function traceOf(call: ProviderInvocation): CallTraceContext | undefined {
  return call.span?.traceContext() ?? call.principal.traceContext;
}

function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function";
}
