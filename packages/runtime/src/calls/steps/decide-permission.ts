import { ToolpactError } from "@toolpact/contract";
import type { PolicyExplanation } from "../../permission-policy.js";
import type { Step } from "../chain.js";

/**
 * decide-permission: the tenant's policy, the sole grant, allows this caller and actor the tool (deciding whether
 * and how it is confirmed), and the actor's verification level is high enough.
 */
export const decidePermission: Step<"tenant" | "tool", "permission"> = function decidePermission(call, next) {
  const { principal, tool } = call;
  const { policy } = call.tenant;
  const explained = policy.explain(tool, principal.callerPluginId, principal.actor);
  call.trace.policyDecided(explained.decision);
  if (policy.shadow !== undefined) {
    const shadow = policy.shadow.explain(tool, principal.callerPluginId, principal.actor);
    if (verdictOf(shadow) !== verdictOf(explained)) {
      call.trace.shadowDisagreed(shadow.decision, shadow.decision === "deny" ? shadow.code : undefined);
    }
  }
  if (explained.decision === "deny") throw new ToolpactError(explained.code, explained.reason, { tool: tool.fullName });
  return next(call.permitted(explained.permission));
};

/** A decision as the call feels it: allow, confirm in which mode, or deny with which code. */
function verdictOf(explained: PolicyExplanation): string {
  if (explained.decision === "deny") return `deny ${explained.code}`;
  return explained.decision === "confirm" ? `confirm ${explained.mode}` : "allow";
}
