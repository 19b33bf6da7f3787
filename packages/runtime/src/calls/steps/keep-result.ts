import { guardSetOf } from "../../ledger/idempotency.js";
import type { Call } from "../call.js";
import type { Next } from "../compose.js";
import { unanswered, type EffectOutcome } from "../outcome.js";

/**
 * Step 10, last: a result an idempotency record will replay is kept sealed with the record, together
 * with the guards that passed it (a replay under other guards runs today's).
 */
export function keepResult(call: Call, next: Next<EffectOutcome>): Promise<EffectOutcome> {
  if (call.settlesRecord === undefined) return next();
  return next().then((outcome) => {
    if (!outcome.answered) return outcome;
    try {
      const sealedResult = call.parts.sealed.sealResult(call.principal.tenantId, call.operation.operationId, outcome.result);
      return { ...outcome, kept: { sealedResult, guardSet: guardSetOf(call.seams) } };
    } catch {
      return unanswered("succeeded", "OUTPUT_INVALID");
    }
  });
}
