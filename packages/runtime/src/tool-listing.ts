import { ToolpactError, pluginClientName } from "@toolpact/contract";
import type { Principal, ToolListing } from "./api.js";
import type { PluginRegistry } from "./registry.js";
import type { TenantConfigCache } from "./tenant-config.js";
import { missingToolScope } from "./tool-scopes.js";

/**
 * `tools.list`: what this caller may call for this actor (installed and enabled providers, handlers
 * registered, within the caller's `uses` and an OAuth token's scopes, allowed by policy), with schemas and whether each needs confirmation.
 */
export async function listTools(
  parts: { readonly registry: PluginRegistry; readonly tenants: TenantConfigCache },
  principal: Principal,
): Promise<readonly ToolListing[]> {
  const { registry } = parts;
  const tenant = await parts.tenants.get(principal.tenantId);
  const caller = registry.get(principal.callerPluginId);
  const callerInstall = tenant.installs.get(principal.callerPluginId);
  if (caller === undefined || callerInstall === undefined || !callerInstall.enabled) {
    throw new ToolpactError("CALLER_DISABLED", `the calling plugin "${principal.callerPluginId}" is not enabled for this tenant`);
  }
  if (!caller.canCall) return [];
  const listing: ToolListing[] = [];
  for (const provider of registry.all()) {
    if (tenant.installs.get(provider.id)?.enabled !== true) continue;
    const alias = pluginClientName(provider.manifest);
    for (const tool of provider.toolList) {
      if (tool.handler === undefined || !caller.usesAllows(tool)) continue;
      if (missingToolScope(principal, tool.declaration.effect) !== undefined) continue;
      const decision = tenant.policy.decide(tool, principal.callerPluginId, principal.actor);
      if (decision.kind === "deny") continue;
      const { declaration } = tool;
      listing.push({
        providerId: provider.id,
        alias,
        name: declaration.name,
        version: declaration.version,
        fullName: tool.fullName,
        ...(declaration.title === undefined ? {} : { title: declaration.title }),
        ...(declaration.description === undefined ? {} : { description: declaration.description }),
        effect: declaration.effect,
        requiresConfirmation: decision.confirm,
        minVerificationLevel: decision.minVerificationLevel,
        inputSchema: declaration.inputSchema,
        ...(declaration.outputSchema === undefined ? {} : { outputSchema: declaration.outputSchema }),
      });
    }
  }
  return listing;
}
