import type { AsyncLocalStorage } from "node:async_hooks";
import {
  ToolpactError,
  type ExecuteOptions,
  type ExecuteResult,
  type PreviewOptions,
  type PreviewResult,
  type ProviderDefinition,
  type ToolHandler,
  type ToolRef,
} from "@toolpact/contract";
import type { Principal, Runtime, ToolListing } from "./api.js";
import type { VerifiedActor } from "./identity/actor-token.js";
import type { PluginRegistry } from "./registry.js";
import type { GateHandler, GuardHandler, HookHandler, SeamKind } from "./seams.js";
import type { CallScope } from "./plugin-code/call-scope.js";

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
   * @throws ToolpactError CAPABILITY_UNDECLARED for a tool this plugin's manifest does not declare.
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
   * @throws ToolpactError CAPABILITY_UNDECLARED for an undeclared name or a second function for one name.
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

/** What the SDK needs from its runtime. */
export interface SdkHost {
  readonly registry: PluginRegistry;
  readonly runtime: Pick<Runtime, "listTools" | "preview" | "execute">;
  readonly scope: AsyncLocalStorage<CallScope>;
  /** Step 1 for an in-process caller: verifies the actor token for `pluginId` (failures are logged and counted). */
  verifyActor(actorToken: string, pluginId: string): Promise<VerifiedActor>;
  readonly clock: () => number;
}

/** Binds an SDK to one registered plugin. */
export function createPluginSdk(host: SdkHost, pluginId: string): PluginSdk {
  const canCall = host.registry.get(pluginId)?.canCall === true;
  const fromScope = (): Principal => {
    if (!canCall) {
      throw new ToolpactError(
        "PERMISSION_DENIED",
        `plugin "${pluginId}" does not hold the "tools:call" permission: add it to its manifest's permissions to call tools`,
      );
    }
    // The scope of the invocation this code runs in, if any; one whose invocation ended acts for nobody
    // (a timer or loop started during a call must not keep acting as that call's user).
    const scope = host.scope.getStore();
    if (scope === undefined || !scope.active) {
      throw new ToolpactError(
        "UNAUTHENTICATED",
        `plugin "${pluginId}" called a tool with no actor: ` +
          (scope === undefined ? "this code runs outside any provider, gate or hook call" : "the call this code was started in has ended") +
          "; caller methods outside a call need sdk.withActor(actorToken)",
      );
    }
    return scope.correlationId === undefined
      ? { tenantId: scope.tenantId, callerPluginId: pluginId, actor: scope.actor }
      : { tenantId: scope.tenantId, callerPluginId: pluginId, actor: scope.actor, correlationId: scope.correlationId };
  };
  const tools: PluginTools = Object.freeze({
    provide: (name: string, handler: ToolHandler<never, unknown>) => {
      host.registry.provide(pluginId, name, handler as ToolHandler);
    },
    provideAll: (definition: ProviderDefinition) => host.registry.provideAll(pluginId, definition),
    ...callerFor(host, () => fromScope()),
  }) as PluginTools;

  const seams = <THandler>(kind: SeamKind): SeamProvider<THandler> =>
    Object.freeze({ provide: (name: string, handler: THandler) => host.registry.provideSeam(pluginId, { kind, name, handler }) });

  return Object.freeze({
    pluginId,
    tools,
    gates: seams<GateHandler>("gate"),
    hooks: seams<HookHandler>("hook"),
    guards: seams<GuardHandler>("guard"),
    withActor(actorToken: string): ActorBoundSdk {
      let principal: Principal | undefined;
      let expiresAt = 0;
      const resolve = async (): Promise<Principal> => {
        if (principal !== undefined && host.clock() <= expiresAt) return principal;
        const verified = await host.verifyActor(actorToken, pluginId);
        principal = Object.freeze({ tenantId: verified.tenantId, callerPluginId: pluginId, actor: verified.actor });
        expiresAt = verified.expiresAt;
        return principal;
      };
      return Object.freeze({ pluginId, tools: Object.freeze(callerFor(host, resolve)) });
    },
  });
}

function callerFor(host: SdkHost, principal: () => Principal | Promise<Principal>): ToolCaller {
  return {
    list: async () => host.runtime.listTools(await principal()),
    preview: async (ref, input, options) => host.runtime.preview(await principal(), ref, input, options),
    execute: async (ref, input, options) => host.runtime.execute(await principal(), ref, input, options),
  };
}
