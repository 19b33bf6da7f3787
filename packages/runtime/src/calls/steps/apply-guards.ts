import { runGuards } from "../../plugin-code/guards.js";
import type { Call } from "../call.js";
import type { Next } from "../compose.js";
import { answered, unanswered, type EffectOutcome } from "../outcome.js";

/**
 * Step 10, after validation: each guard acting on the call may pass, replace or withhold the output
 * (GUARD_REJECTED: the effect happened, the result is not shown). Guards fail closed.
 */
export function applyGuards(call: Call, next: Next<EffectOutcome>): Promise<EffectOutcome> {
  if (call.seams.guards.length === 0) return next();
  return next().then(async (outcome) => {
    if (!outcome.answered) return outcome;
    const { parts, principal, tool, seams } = call;
    try {
      const verdict = await runGuards(parts.pluginCode, {
        principal,
        tool,
        input: call.input,
        seams,
        operationId: call.operation.operationId,
        output: outcome.result,
      });
      if (verdict.ok) return answered(verdict.output);
      call.trace.decidedBy(verdict.seam);
      return unanswered("succeeded", verdict.errorCode, verdict.errorClass);
    } catch {
      return unanswered("succeeded", "OUTPUT_INVALID");
    }
  });
}
