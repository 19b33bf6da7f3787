/**
 * What a plugin's `activate(sdk)` receives, as types only: a provider author writes against these with
 * `@toolpact/client` (or this package) installed, never the runtime. `@toolpact/runtime` implements them
 * and re-exports them under the same names.
 */
import type { SettledOperationState } from "./states.js";
import type { ActorInfo, Effect, ExecuteOptions, ExecuteResult, PreviewOptions, PreviewResult, ProviderDefinition, ToolHandler, ToolRef } from "./protocol.js";

/** A tool as `tools.list` shows it to a caller. */
export interface ToolListing {
  readonly providerId: string;
  /** The provider's client name: its manifest's `alias`, else the last id segment camelCased (`notes`). */
  readonly alias: string;
  readonly name: string;
  readonly version: number;
  readonly fullName: string;
  readonly title?: string;
  readonly description?: string;
  readonly effect: Effect;
  readonly requiresConfirmation: boolean;
  readonly minVerificationLevel: number;
  readonly inputSchema: unknown;
  readonly outputSchema?: unknown;
}

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
  readonly outcome: SettledOperationState;
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

/** The caller half of the SDK: list, preview and execute tools as this plugin, for one actor. */
export interface ToolCaller {
  /** The tools this plugin may call for the actor, with schemas. */
  list(): Promise<readonly ToolListing[]>;
  preview(ref: ToolRef, input: unknown, options?: PreviewOptions): Promise<PreviewResult>;
  execute(ref: ToolRef, input: unknown, options?: ExecuteOptions): Promise<ExecuteResult>;
}

/** `sdk.tools`: provide this plugin's declared tools, and call tools (inside a provider call). */
export interface PluginTools extends ToolCaller {
  /**
   * Registers the handler of a declared tool: `"name"` when one version is declared, else `"name@version"`.
   * @throws ToolpactError CAPABILITY_UNDECLARED for a tool this plugin's manifest does not declare;
   *   HANDLER_INVALID for a handler without an execute function, or a second one.
   */
  provide<TInput = unknown, TOutput = unknown>(name: string, handler: ToolHandler<TInput, TOutput>): void;
  /** Registers every handler of a provider definition (generated `define<Alias>Provider`) made for this plugin. */
  provideAll(definition: ProviderDefinition): void;
}

/** `sdk.gates`, `sdk.hooks`, `sdk.guards`: provide the functions of this plugin's declared seams. */
export interface SeamProvider<THandler> {
  /**
   * Registers the function of a gate, hook or guard this plugin's manifest declares. It acts only where
   * a tenant activated it (`admin.setActivation`) and within its `appliesTo`.
   * @throws ToolpactError CAPABILITY_UNDECLARED for an undeclared name; HANDLER_INVALID for something
   *   that is not a function, or a second function for one name.
   */
  provide(name: string, handler: THandler): void;
}

/** The caller surface bound to one actor (`sdk.withActor(actorToken)`). */
export interface ActorBoundSdk {
  readonly pluginId: string;
  readonly tools: ToolCaller;
}

/**
 * What a plugin's `activate(sdk)` receives. Caller methods act for the current operation's actor while a
 * provider, gate, hook or guard call of this plugin runs (not once it ended: a timer or loop it started
 * acts for nobody), or for the actor of `withActor(actorToken)`; anywhere else they refuse.
 */
export interface PluginSdk {
  readonly pluginId: string;
  readonly tools: PluginTools;
  /** Gates (step 7): allow, block, require confirmation, or answer with a result. Needs `tools:gate`. */
  readonly gates: SeamProvider<GateHandler>;
  /** AfterTool hooks (step 11): stage reactions committed with the operation. Needs `tools:observe`. */
  readonly hooks: SeamProvider<HookHandler>;
  /** Output guards (step 10): pass, replace or withhold the output. Needs `tools:guard`. */
  readonly guards: SeamProvider<GuardHandler>;
  /** The caller surface acting for the actor of a verified actor token (its `azp`, if any, must be this plugin). */
  withActor(actorToken: string): ActorBoundSdk;
}
