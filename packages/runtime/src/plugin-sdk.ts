import type { AsyncLocalStorage } from "node:async_hooks";
import { ToolpactError, type ProviderDefinition, type ToolHandler } from "@toolpact/contract";
import type { ActorBoundSdk, PluginSdk, PluginTools, SeamProvider, ToolCaller } from "@toolpact/protocol";
import type { Principal, Runtime } from "./api.js";
import type { VerifiedActor } from "./identity/actor-token.js";
import type { PluginRegistry } from "./registry.js";
import type { GateHandler, GuardHandler, HookHandler, SeamKind } from "./seams.js";
import type { CallScope } from "./plugin-code/call-scope.js";

// What `activate(sdk)` receives is typed in @toolpact/protocol, so a provider needs no runtime to write one.
export type { ActorBoundSdk, PluginSdk, PluginTools, SeamProvider, ToolCaller } from "@toolpact/protocol";

/** What the SDK needs from its runtime. */
export interface SdkHost {
  readonly registry: PluginRegistry;
  readonly runtime: Pick<Runtime, "listTools" | "preview" | "execute">;
  readonly scope: AsyncLocalStorage<CallScope>;
  /** Authentication for an in-process caller: verifies the actor token for `pluginId` (failures are logged and counted). */
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
      ? { tenantId: scope.tenantId, callerPluginId: pluginId, actor: scope.actor, authenticatedBy: "in-process" as const }
      : { tenantId: scope.tenantId, callerPluginId: pluginId, actor: scope.actor, correlationId: scope.correlationId, authenticatedBy: "in-process" as const };
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
        principal = Object.freeze({ tenantId: verified.tenantId, callerPluginId: pluginId, actor: verified.actor, authenticatedBy: "in-process" as const });
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
