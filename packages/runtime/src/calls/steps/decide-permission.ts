import { ToolpactError } from "@toolpact/contract";
import type { Step } from "../chain.js";

/**
 * decide-permission: the tenant's policy, the sole grant, allows this caller and actor the tool (deciding whether
 * and how it is confirmed), and the actor's verification level is high enough.
 */
export const decidePermission: Step<"tenant" | "tool", "permission"> = function decidePermission(call, next) {
  const { principal, tool } = call;
  const decision = call.tenant.policy.decide(tool, principal.callerPluginId, principal.actor);
  call.trace.policyDecided(decision.kind === "deny" ? "deny" : decision.confirm ? "confirm" : "allow");
  if (decision.kind === "deny") {
    throw new ToolpactError("PERMISSION_DENIED", `${tool.fullName} is not permitted for this caller and user: ${decision.reason}`, {
      tool: tool.fullName,
    });
  }
  if (principal.actor.verificationLevel < decision.minVerificationLevel) {
    throw new ToolpactError(
      "VERIFICATION_REQUIRED",
      `${tool.fullName} needs verification level ${decision.minVerificationLevel}; the user is at ${principal.actor.verificationLevel}: ` +
        "the user must verify further",
      { tool: tool.fullName },
    );
  }
  return next(call.permitted(decision));
};
