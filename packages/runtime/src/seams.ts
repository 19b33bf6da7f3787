/**
 * Gates, AfterTool hooks and guards: what plugins provide for them (`sdk.gates/hooks/guards.provide`)
 * and how the runtime resolves which of them act on a call.
 */
import { matchesToolPattern, type ActorInfo, type Effect } from "@toolpact/contract";

/** A call as a gate sees it (step 7): after permission and the provider's `authorize`. */
export interface GateCall {
  readonly tenantId: string;
  /** The tool's full name, `<pluginId>:<name>@<version>`. */
  readonly tool: string;
  readonly providerId: string;
  readonly name: string;
  readonly version: number;
  readonly effect: Effect;
  /** The validated, frozen input. */
  readonly input: unknown;
  readonly phase: "preview" | "execute";
  readonly callerPluginId: string;
  readonly actor: ActorInfo;
  readonly runId?: string;
}

/**
 * A gate's answer. Most restrictive wins across gates: block > requireConfirmation > result > allow.
 * `result` answers the call with `value` instead of invoking the provider (validated against outputSchema).
 */
export type GateDecision =
  | { readonly decision: "allow" }
  | { readonly decision: "block"; readonly reason: string }
  | { readonly decision: "requireConfirmation"; readonly reason?: string }
  | { readonly decision: "result"; readonly value: unknown };

/** A call's outcome as an AfterTool hook sees it (step 11). */
export interface HookCall {
  readonly tenantId: string;
  readonly tool: string;
  readonly providerId: string;
  readonly effect: Effect;
  readonly input: unknown;
  /** The output the caller receives (after guards); undefined when the call failed or a guard withheld it. */
  readonly output: unknown;
  readonly outcome: "succeeded" | "failed" | "unknown";
  /** Set when the caller gets an error: PROVIDER_FAILED, OUTCOME_UNKNOWN, OUTPUT_INVALID, GUARD_REJECTED. */
  readonly errorCode?: string;
  readonly operationId: string;
  readonly callerPluginId: string;
  readonly actor: ActorInfo;
}

/** A reaction a hook stages; it is committed with the operation into the outbox (`admin.claimOutbox`). */
export interface StagedReaction {
  /** What kind of reaction, e.g. "notify-owner"; 1..64 characters. */
  readonly kind: string;
  /** JSON; kept sealed until delivered. */
  readonly payload: unknown;
}

/** An output as a guard sees it (step 10, after outputSchema validation). */
export interface GuardCall {
  readonly tenantId: string;
  readonly tool: string;
  readonly providerId: string;
  readonly effect: Effect;
  readonly input: unknown;
  readonly output: unknown;
  readonly operationId: string;
  readonly callerPluginId: string;
  readonly actor: ActorInfo;
}

/** A guard's answer: let the output pass, replace it (validated again), or withhold it (GUARD_REJECTED). */
export type GuardDecision =
  | { readonly decision: "pass" }
  | { readonly decision: "replace"; readonly output: unknown }
  | { readonly decision: "withhold"; readonly reason: string };

/** Runtime-made, frozen context of a gate, hook or guard call. */
export interface SeamContext {
  readonly tenantId: string;
  readonly actor: ActorInfo;
  readonly callerPluginId: string;
  /** The tool's full name. */
  readonly tool: string;
  readonly phase: "preview" | "execute";
  /** The operation, for hooks and guards (gates run before it exists). */
  readonly operationId?: string;
  /** Aborts when the seam's timeout fires. */
  readonly signal: AbortSignal;
}

/** A gate's function. */
export type GateHandler = (call: GateCall, ctx: SeamContext) => GateDecision | Promise<GateDecision>;
/** An AfterTool hook's function. */
export type HookHandler = (call: HookCall, ctx: SeamContext) => readonly StagedReaction[] | Promise<readonly StagedReaction[]>;
/** A guard's function. */
export type GuardHandler = (call: GuardCall, ctx: SeamContext) => GuardDecision | Promise<GuardDecision>;

/** The three kinds of seam a plugin may declare. */
export type SeamKind = "gate" | "hook" | "guard";

/** How long a gate, hook or guard may take when its declaration names no `timeoutMs`. */
export const DEFAULT_SEAM_TIMEOUT_MS = 2000;

/** A declared gate, hook or guard of a registered plugin. */
export interface RegisteredSeam<THandler> {
  readonly kind: SeamKind;
  readonly pluginId: string;
  readonly name: string;
  /** `<pluginId>:<name>`: how activity and policy `narrow` name it. */
  readonly key: string;
  readonly appliesTo: readonly string[];
  readonly timeoutMs: number;
  /** Plugin registration order, then manifest order: the order seams of one kind run in. */
  readonly order: number;
  /** Its plugin holds `tools:call`: its caller methods act for the call's actor while it runs. */
  readonly canCall: boolean;
  /** Set by `sdk.<kind>s.provide`; an activated seam without one fails closed. */
  handler: THandler | undefined;
}

/** The gates, hooks and guards that act on one tool for one tenant, in order. */
export interface ResolvedSeams {
  readonly gates: readonly RegisteredSeam<GateHandler>[];
  readonly hooks: readonly RegisteredSeam<HookHandler>[];
  readonly guards: readonly RegisteredSeam<GuardHandler>[];
}

/** No seam acts: shared so the common case allocates nothing. */
export const NO_SEAMS: ResolvedSeams = Object.freeze({ gates: [], hooks: [], guards: [] });

/** Does a seam act on this tool: within its declared `appliesTo`, and within the policy's narrowing if any? */
export function seamApplies(
  seam: RegisteredSeam<unknown>,
  narrowed: readonly string[] | undefined,
  tool: { readonly providerId: string; readonly name: string; readonly version: number },
): boolean {
  const { providerId, name, version } = tool;
  const declared = seam.appliesTo.some((pattern) => matchesToolPattern(pattern, providerId, name, version));
  if (!declared) return false;
  return narrowed === undefined || narrowed.some((pattern) => matchesToolPattern(pattern, providerId, name, version));
}

/** Rank of a gate decision: the highest rank wins. */
export function gateRank(decision: GateDecision["decision"]): number {
  switch (decision) {
    case "block":
      return 3;
    case "requireConfirmation":
      return 2;
    case "result":
      return 1;
    default:
      return 0;
  }
}
