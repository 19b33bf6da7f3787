import { ToolpactError } from "@toolpact/contract";
import { checkRun } from "../../runs.js";
import { missingToolScope } from "../../tool-scopes.js";
import type { CallAt } from "../call.js";
import type { Next, Step } from "../chain.js";

type Reads = "tenant" | "tool";

/**
 * check-caller: the caller's plugin key is still live under the tenant config the call is decided under
 * (authentication may have answered from its cache; an execute's commit checks that version again); the
 * calling plugin is loaded, installed and enabled for the tenant, holds `tools:call`, and its manifest's
 * `uses` (when present) includes the tool; an OAuth caller's token holds the scope of the tool's effect
 * (`tools:<effect>`); a call in a run must be allowed by that run.
 */
export const checkCaller: Step<Reads> = function checkCaller(call, next) {
  // An execute's commit (the ledger's begin, or a read's one record) checks the config version again; a preview's nothing.
  const confirmed = call.parts.identity.confirmKey(call.principal, { tenantConfigVersion: call.tenant.version, committed: call.phase === "execute" });
  if (confirmed !== undefined) return confirmed.then(() => checkCallerPlugin(call, next));
  return checkCallerPlugin(call, next);
};

function checkCallerPlugin<T>(call: CallAt<Reads>, next: Next<CallAt<Reads>, T>): Promise<T> {
  const { principal, tool, tenant } = call;
  const caller = call.parts.registry.get(principal.callerPluginId);
  const install = tenant.installs.get(principal.callerPluginId);
  if (caller === undefined || install === undefined || !install.enabled) {
    throw new ToolpactError(
      "CALLER_DISABLED",
      `the calling plugin "${principal.callerPluginId}" is not ${caller === undefined ? "loaded in this host" : install === undefined ? "installed for this tenant" : "enabled for this tenant"}`,
      { tool: tool.fullName },
    );
  }
  if (!caller.canCall) {
    throw new ToolpactError(
      "PERMISSION_DENIED",
      caller.tools.size > 0
        ? `the plugin key used belongs to "${caller.id}", a provider without the "tools:call" permission: ` +
            "call with the calling plugin's own key (admin.issuePluginKey issues one for its id)"
        : `plugin "${caller.id}" does not hold the "tools:call" permission: add it to its manifest's permissions`,
      { tool: tool.fullName },
    );
  }
  if (!caller.usesAllows(tool)) {
    throw new ToolpactError("PERMISSION_DENIED", `plugin "${caller.id}" may not call ${tool.fullName}: its manifest's "uses" does not include it`, {
      tool: tool.fullName,
    });
  }
  const scope = missingToolScope(principal, tool.declaration.effect);
  if (scope !== undefined) {
    throw new ToolpactError(
      "PERMISSION_DENIED",
      `the access token does not grant ${tool.fullName}, a ${tool.declaration.effect} tool: ask the authorization server for the scope "${scope}"`,
      { tool: tool.fullName, requiredScope: scope },
    );
  }
  if (call.runId === undefined) return next(call);
  return checkRun(call.parts.context, { principal, tool, runId: call.runId }).then(() => next(call));
}
