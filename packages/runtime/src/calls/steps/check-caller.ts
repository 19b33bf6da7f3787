import { ToolpactError } from "@toolpact/contract";
import { checkRun } from "../../runs.js";
import type { Call } from "../call.js";
import type { Next } from "../compose.js";

/**
 * Step 3: the caller's plugin key is still live under the tenant config the call is decided under (step 1
 * may have answered from its cache; an execute's commit checks that version again); the calling plugin is
 * loaded, installed and enabled for the tenant, holds `tools:call`, and its manifest's `uses` (when
 * present) includes the tool; a call in a run must be allowed by that run.
 */
export function checkCaller<T>(call: Call, next: Next<T>): Promise<T> {
  // An execute's commit checks the tenant's config version again (steps 9 and 12); a preview's nothing.
  const confirmed = call.parts.identity.confirmKey(call.principal, { tenantConfigVersion: call.tenant.version, committed: call.phase === "execute" });
  if (confirmed !== undefined) return confirmed.then(() => checkCallerPlugin(call, next));
  return checkCallerPlugin(call, next);
}

function checkCallerPlugin<T>(call: Call, next: Next<T>): Promise<T> {
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
      `plugin "${caller.id}" does not hold the "tools:call" permission: add it to its manifest's permissions`,
      { tool: tool.fullName },
    );
  }
  if (!caller.usesAllows(tool)) {
    throw new ToolpactError(
      "PERMISSION_DENIED",
      `plugin "${caller.id}" may not call ${tool.fullName}: its manifest's "uses" does not include it`,
      { tool: tool.fullName },
    );
  }
  if (call.runId === undefined) return next();
  return checkRun(call.parts.context, { principal, tool, runId: call.runId }).then(() => next());
}
