import { ToolpactError } from "@toolpact/contract";
import type { Step } from "../chain.js";

/**
 * decide-permission: the tenant's policy, the sole grant, allows this caller and actor the tool (deciding whether
 * and how it is confirmed), and the actor's verification level is high enough.
 */
export const decidePermission: Step<"tenant" | "tool", "permission"> = function decidePermission(call, next) {
  const { principal, tool } = call;
  const explained = call.tenant.policy.explain(tool, principal.callerPluginId, principal.actor);
  if (explained.decision === "deny") throw new ToolpactError(explained.code, explained.reason, { tool: tool.fullName });
  return next(call.permitted(explained.permission));
};
