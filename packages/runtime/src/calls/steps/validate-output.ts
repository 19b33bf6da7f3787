import type { EffectStep } from "../chain.js";
import { unanswered } from "../outcome.js";

/** validate-output, after invoke-provider: a result that breaks the tool's outputSchema is withheld (OUTPUT_INVALID). */
export const validateOutput: EffectStep<"tool"> = function validateOutput(call, outcome) {
  const validate = call.tool.validateOutput;
  if (validate === undefined || !outcome.answered) return outcome;
  try {
    return validate(outcome.result).length > 0 ? unanswered("succeeded", "OUTPUT_INVALID") : outcome;
  } catch {
    return unanswered("succeeded", "OUTPUT_INVALID");
  }
};
