import { ToolpactError, pluginClientName, type ToolRef } from "@toolpact/contract";
import type { Principal, ToolListing } from "./api.js";
import type { RegisteredPlugin, PluginRegistry, RegisteredTool } from "./registry.js";
import type { TenantConfigCache, TenantState } from "./tenant-config.js";
import { missingToolScope } from "./tool-scopes.js";

/** What listing needs of the runtime. */
interface ListingParts {
  readonly registry: PluginRegistry;
  readonly tenants: TenantConfigCache;
}

/** The tenant and calling plugin of a principal whose caller is installed and enabled. */
interface ListingCaller {
  readonly tenant: TenantState;
  readonly caller: RegisteredPlugin;
  readonly principal: Principal;
}

/**
 * `tools.list`: what this caller may call for this actor (installed and enabled providers, handlers
 * registered, within the caller's `uses` and an OAuth token's scopes, allowed by policy), with schemas and whether each needs confirmation.
 */
export async function listTools(parts: ListingParts, principal: Principal): Promise<readonly ToolListing[]> {
  const lister = await listingCallerOf(parts, principal);
  if (!lister.caller.canCall) return [];
  const listing: ToolListing[] = [];
  for (const provider of parts.registry.all()) {
    if (lister.tenant.installs.get(provider.id)?.enabled !== true) continue;
    const alias = pluginClientName(provider.manifest);
    for (const tool of provider.toolList) {
      const entry = listingOf(lister, tool, alias);
      if (entry !== undefined) listing.push(entry);
    }
  }
  return listing;
}

/**
 * The entry `listTools` would list for one tool: `ref.version`, or without one the highest version it
 * would list; undefined when it would list none. Costs the versions of that one tool, not the catalogue.
 */
export async function findTool(parts: ListingParts, principal: Principal, ref: ToolRef): Promise<ToolListing | undefined> {
  const lister = await listingCallerOf(parts, principal);
  const provider = parts.registry.get(ref.providerId);
  if (!lister.caller.canCall || provider === undefined || lister.tenant.installs.get(provider.id)?.enabled !== true) return undefined;
  const versions = provider.tools.get(ref.tool);
  if (versions === undefined) return undefined;
  const alias = pluginClientName(provider.manifest);
  if (ref.version !== undefined) {
    const tool = versions.byVersion.get(ref.version);
    return tool === undefined ? undefined : listingOf(lister, tool, alias);
  }
  for (const version of versions.versions) {
    const entry = listingOf(lister, versions.byVersion.get(version)!, alias);
    if (entry !== undefined) return entry;
  }
  return undefined;
}

/** @throws ToolpactError CALLER_DISABLED when the calling plugin is not installed and enabled for the tenant. */
async function listingCallerOf(parts: ListingParts, principal: Principal): Promise<ListingCaller> {
  const tenant = await parts.tenants.get(principal.tenantId);
  const caller = parts.registry.get(principal.callerPluginId);
  const callerInstall = tenant.installs.get(principal.callerPluginId);
  if (caller === undefined || callerInstall === undefined || !callerInstall.enabled) {
    throw new ToolpactError("CALLER_DISABLED", `the calling plugin "${principal.callerPluginId}" is not enabled for this tenant`);
  }
  return { tenant, caller, principal };
}

/** One tool of an installed and enabled provider as the caller sees it; undefined when it may not call it. */
function listingOf(lister: ListingCaller, tool: RegisteredTool, alias: string): ToolListing | undefined {
  const { tenant, caller, principal } = lister;
  if (tool.handler === undefined || !caller.usesAllows(tool)) return undefined;
  if (missingToolScope(principal, tool.declaration.effect) !== undefined) return undefined;
  const decision = tenant.policy.decide(tool, principal.callerPluginId, principal.actor);
  if (decision.kind === "deny") return undefined;
  const { declaration } = tool;
  return {
    providerId: tool.providerId,
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
  };
}
