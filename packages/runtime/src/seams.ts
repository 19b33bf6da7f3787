/**
 * Gates, AfterTool hooks and guards: what plugins provide for them (`sdk.gates/hooks/guards.provide`)
 * and how the runtime resolves which of them act on a call.
 */
import { matchesToolPattern } from "@toolpact/contract";
import type { GateDecision, GateHandler, GuardHandler, HookHandler } from "@toolpact/protocol";

// The functions plugins provide are part of the SDK's types, in @toolpact/protocol (no runtime needed to write one).
export type {
  GateCall,
  GateDecision,
  GateHandler,
  HookCall,
  HookHandler,
  StagedReaction,
  GuardCall,
  GuardDecision,
  GuardHandler,
  SeamContext,
} from "@toolpact/protocol";

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
