import { guardSetOf } from "../../ledger/idempotency.js";
import type { EffectStep } from "../chain.js";
import { unanswered } from "../outcome.js";

/**
 * keep-result, after apply-guards: a result an idempotency record will replay is kept sealed with the record, together
 * with the guards that passed it (a replay under other guards runs today's).
 */
export const keepResult: EffectStep<"seams" | "operation"> = function keepResult(call, outcome) {
  const { operation } = call;
  if (operation.settles === undefined || !outcome.answered) return outcome;
  try {
    const sealedResult = call.parts.sealed.sealResult(call.principal.tenantId, operation.operationId, outcome.result);
    return { ...outcome, kept: { sealedResult, guardSet: guardSetOf(call.seams) } };
  } catch {
    return unanswered("succeeded", "OUTPUT_INVALID");
  }
};
