import { ToolpactError } from "@toolpact/contract";
import type { Step } from "../chain.js";

/** Before anything else: a preview counts against its caller and actor's per-minute limit. */
export const limitPreviews: Step<never> = function limitPreviews(call, next) {
  const { principal, parts } = call;
  const retryAfterMs = parts.previewLimiter.take(`${principal.tenantId}\u0000${principal.callerPluginId}\u0000${principal.actor.userId}`);
  if (retryAfterMs !== undefined) {
    throw new ToolpactError(
      "RATE_LIMITED",
      `too many previews by this caller for this user: at most ${parts.context.previewsPerMinute} a minute; retry in ${Math.ceil(retryAfterMs / 1000)} s`,
      { retryAfterMs },
    );
  }
  return next(call);
};
