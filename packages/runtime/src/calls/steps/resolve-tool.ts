import { PLUGIN_ID_MAX_LENGTH, PLUGIN_ID_PATTERN, TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN, ToolpactError, didYouMean } from "@toolpact/contract";
import { pluginIdHint } from "../../plugin-id-hint.js";
import type { RegisteredTool } from "../../registry.js";
import type { TenantState } from "../../tenant-config.js";
import type { CallAt } from "../call.js";
import type { Next, Step } from "../chain.js";

/**
 * resolve-tool, the first step after authentication: the provider, loaded in this host and installed and
 * enabled for the tenant, and the declared tool version the ref names (the highest when it names none),
 * with the handler its provider registered; the gates, hooks and guards acting on it are resolved with it.
 */
export const resolveTool: Step<never, "tenant" | "provider" | "tool" | "handler" | "seams"> = function resolveTool(call, next) {
  const tenant = call.parts.tenants.get(call.principal.tenantId);
  if (tenant instanceof Promise) return tenant.then((loaded) => resolveIn(call, loaded, next));
  return resolveIn(call, tenant, next);
};

function resolveIn<T>(call: CallAt<never>, tenant: TenantState, next: Next<CallAt<"tenant" | "provider" | "tool" | "handler" | "seams">, T>): Promise<T> {
  const { ref, trace } = call;
  const providerId = ref?.providerId;
  if (typeof providerId !== "string" || providerId.length > PLUGIN_ID_MAX_LENGTH || !PLUGIN_ID_PATTERN.test(providerId)) {
    throw new ToolpactError("PROVIDER_NOT_FOUND", 'ref.providerId is not a plugin id, e.g. "com.example.notes"');
  }
  trace.namedProvider(providerId);
  const provider = call.parts.registry.get(providerId);
  const install = tenant.installs.get(providerId);
  if (provider === undefined || install === undefined) {
    // Suggestions come from what this tenant has installed: a caller learns nothing of other tenants' plugins.
    const hint = pluginIdHint(providerId, installedProviders(call, tenant));
    throw new ToolpactError(
      "PROVIDER_NOT_FOUND",
      provider === undefined
        ? `no plugin "${providerId}" is loaded in this host${hint}`
        : `plugin "${providerId}" is not installed for this tenant: the tenant admin installs it with admin.installPlugin${hint}`,
    );
  }
  if (!install.enabled) {
    throw new ToolpactError("PROVIDER_DISABLED", `plugin "${providerId}" is disabled for this tenant`);
  }
  const name = ref.tool;
  if (typeof name !== "string" || name.length > TOOL_NAME_MAX_LENGTH || !TOOL_NAME_PATTERN.test(name)) {
    throw new ToolpactError("TOOL_NOT_FOUND", `ref.tool is not a tool name, e.g. "create-record"`);
  }
  trace.namedTool(name);
  const versions = provider.tools.get(name);
  if (versions === undefined) {
    throw new ToolpactError("TOOL_NOT_FOUND", `plugin "${providerId}" declares no tool "${name}"${didYouMean(name, provider.tools.keys())}`);
  }
  const version = ref.version;
  let tool: RegisteredTool | undefined;
  if (version === undefined) {
    tool = versions.highest;
  } else {
    trace.namedVersion(version);
    tool = Number.isInteger(version) ? versions.byVersion.get(version) : undefined;
    if (tool === undefined) {
      throw new ToolpactError("VERSION_UNSUPPORTED", `${providerId}:${name} has no version ${String(version)}; declared: ${versions.versions.join(", ")}`);
    }
  }
  trace.resolved(tool);
  const handler = tool.handler;
  if (handler === undefined) {
    throw new ToolpactError(
      "HANDLER_MISSING",
      `${tool.fullName} is declared but its provider registered no handler: the provider must call sdk.tools.provide`,
      { tool: tool.fullName },
    );
  }
  return next(call.resolved({ tenant, provider, tool, handler }));
}

/** The providers installed for the tenant and loaded in this host: what a mistyped provider id may have meant. */
function* installedProviders(call: CallAt<never>, tenant: TenantState): Iterable<string> {
  for (const id of tenant.installs.keys()) if ((call.parts.registry.get(id)?.tools.size ?? 0) > 0) yield id;
}
