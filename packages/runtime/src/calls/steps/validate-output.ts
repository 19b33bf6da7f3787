import type { Call } from "../call.js";
import type { Next } from "../compose.js";
import { unanswered, type EffectOutcome } from "../outcome.js";

/** Step 10, on the way back: a result that breaks the tool's outputSchema is withheld (OUTPUT_INVALID). */
export function validateOutput(call: Call, next: Next<EffectOutcome>): Promise<EffectOutcome> {
  const validate = call.tool.validateOutput;
  if (validate === undefined) return next();
  return next().then((outcome) => {
    if (!outcome.answered) return outcome;
    try {
      return validate(outcome.result).length > 0 ? unanswered("succeeded", "OUTPUT_INVALID") : outcome;
    } catch {
      return unanswered("succeeded", "OUTPUT_INVALID");
    }
  });
}
