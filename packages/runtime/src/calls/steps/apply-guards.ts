import { runGuards } from "../../plugin-code/guards.js";
import type { CallAt } from "../call.js";
import type { EffectStep } from "../chain.js";
import { answered, unanswered, type EffectOutcome } from "../outcome.js";

type Reads = "tool" | "input" | "seams" | "operation";

/**
 * apply-guards, after validate-output: each guard acting on the call may pass, replace or withhold the output
 * (GUARD_REJECTED: the effect happened, the result is not shown). Guards fail closed.
 */
export const applyGuards: EffectStep<Reads> = function applyGuards(call, outcome) {
  return call.seams.guards.length === 0 || !outcome.answered ? outcome : guarded(call, outcome.result);
};

async function guarded(call: CallAt<Reads>, output: unknown): Promise<EffectOutcome> {
  const { parts, principal, tool, seams } = call;
  try {
    const verdict = await runGuards(parts.pluginCode, { principal, tool, input: call.input, seams, operationId: call.operation.operationId, output });
    if (verdict.ok) return answered(verdict.output);
    call.trace.decidedBy(verdict.seam);
    return unanswered("succeeded", verdict.errorCode, verdict.errorClass);
  } catch {
    return unanswered("succeeded", "OUTPUT_INVALID");
  }
}
