/**
 * What the bridge needs from toolpact, for one caller acting for one user: list, preview, execute,
 * wait, cancel. Two implementations: in process over the `Runtime` (`toolpact serve`'s `/mcp`), and
 * remote over a server's HTTP API (`toolpact mcp --url`). Both reject with `ToolpactError`.
 */
import type { ConfirmationStatus, ExecuteOptions, ExecuteResult, PreviewResult, ToolRef } from "@toolpact/contract";
import type { CallTraceContext, Principal, Runtime, ToolListing } from "@toolpact/runtime";
import type { CallerFacts } from "./request-state.js";

/** Options of one `waitConfirmation` round. */
export interface WaitRound {
  /** How long this round may wait for a decision, ms (0 answers the status now; the server caps it at ~25 s). */
  readonly timeoutMs: number;
  /** Ends the round early; the answer is then the current status. */
  readonly signal?: AbortSignal;
}

/** Toolpact as one caller acting for one user sees it. */
export interface ToolBackend {
  /** Who the calls act for (tenant, user, caller plugin): what a 2026-07-28 approval state is bound to. */
  caller(): Promise<CallerFacts>;
  /** The tools this caller may call for this user now. */
  listTools(): Promise<readonly ToolListing[]>;
  /**
   * The entry `listTools` would list for one tool (without `ref.version`, its highest listed version), or
   * undefined; absent: the backend cannot look one tool up, so names are resolved in `listTools`.
   */
  findTool?(ref: ToolRef): Promise<ToolListing | undefined>;
  preview(ref: ToolRef, input: unknown): Promise<PreviewResult>;
  execute(ref: ToolRef, input: unknown, options?: ExecuteOptions): Promise<ExecuteResult>;
  /** One long-poll round on a platform-mode confirmation request. */
  waitConfirmation(requestId: string, round: WaitRound): Promise<ConfirmationStatus>;
  /** Withdraws a pending request (a decided one is left as it is). */
  cancelConfirmation(requestId: string): Promise<void>;
  /** True when a live user grant may cover a call of this tool (absent: the backend cannot tell, so no grant is tried). */
  mayBeGranted?(ref: ToolRef): Promise<boolean>;
  /** The same backend, its calls continuing `trace` (an MCP request's `_meta.traceparent`); absent: trace context is not carried. */
  withTrace?(trace: CallTraceContext): ToolBackend;
}

/**
 * A backend over the runtime in this process, for a principal the server authenticated. Every call of
 * the backend carries `correlationId` (activity events record it), e.g. `mcp:<uuid>` for one MCP call.
 */
export function createRuntimeBackend(runtime: Runtime, principal: Principal, correlationId?: string): ToolBackend {
  const acting: Principal = correlationId === undefined ? principal : Object.freeze({ ...principal, correlationId });
  const facts: CallerFacts = { tenantId: principal.tenantId, actorUserId: principal.actor.userId, callerPluginId: principal.callerPluginId };
  return {
    withTrace: (trace) => createRuntimeBackend(runtime, Object.freeze({ ...acting, traceContext: { ...acting.traceContext, ...trace } })),
    caller: async () => facts,
    listTools: () => runtime.listTools(acting),
    findTool: (ref) => runtime.findTool(acting, ref),
    mayBeGranted: (ref) => runtime.grants.mayCover(acting, ref),
    preview: (ref, input) => runtime.preview(acting, ref, input),
    execute: (ref, input, options) => runtime.execute(acting, ref, input, options),
    waitConfirmation: (requestId, round) => runtime.waitConfirmation(acting, requestId, round.signal === undefined ? { timeoutMs: round.timeoutMs } : round),
    cancelConfirmation: (requestId) => runtime.cancelConfirmation(acting, requestId),
  };
}
