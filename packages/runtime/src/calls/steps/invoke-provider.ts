import { errorClassOf } from "../../activity/error-class.js";
import { outputFailureClassOf, outputOf } from "../../plugin-code/answers.js";
import { TIMED_OUT } from "../../plugin-code/plugin-code-runner.js";
import { ProviderOutcomeUnknown, ProviderRefusal, signalMessage } from "@toolpact/contract";
import type { CallAt } from "../call.js";
import { answered, unanswered, type EffectOutcome, type Unanswered } from "../outcome.js";

/**
 * invoke-provider, the effect's first step. The provider's `execute` runs once, with the operation id, under the tool's
 * timeout; its answer is copied at once (what the provider does to its object later changes nothing).
 * A gate that answered the call stands in for the provider. A read that times out failed; a write or
 * external effect that times out, or whose provider says its answer was lost (ProviderOutcomeUnknown), may
 * have happened: its outcome is unknown. A ProviderRefusal's message reaches the caller, made visible.
 */
export async function invokeProvider(call: CallAt<"provider" | "tool" | "handler" | "input" | "decision" | "operation">): Promise<EffectOutcome> {
  const gate = call.decision.answer;
  if (gate !== undefined) {
    call.trace.decidedBy(gate.seam);
    return answered(gate.value);
  }
  const { tool, handler, parts } = call;
  const { declaration, fullName } = tool;
  const { operationId } = call.operation;
  let answer: unknown;
  try {
    answer = await parts.pluginCode.runExecute(call, operationId, (ctx) => handler.execute(call.input, ctx));
  } catch (error) {
    const failed = failureOf(error, declaration.effect === "read");
    parts.context.logger.warn({ event: "provider_failed", tool: fullName, operationId, errorClass: failed.errorClass, state: failed.state });
    return failed;
  }
  try {
    return answered(outputOf(answer));
  } catch (error) {
    return unanswered("succeeded", "OUTPUT_INVALID", outputFailureClassOf(error));
  }
}

/** What a provider's throw comes to: a timeout or a lost answer is unknown for an effect, failed for a read. */
function failureOf(error: unknown, read: boolean): Unanswered {
  if (error === TIMED_OUT || error instanceof ProviderOutcomeUnknown) {
    const errorClass = error === TIMED_OUT ? "TimeoutError" : errorClassOf(error);
    return read ? unanswered("failed", "PROVIDER_FAILED", errorClass) : unanswered("unknown", "OUTCOME_UNKNOWN", errorClass);
  }
  const failed = unanswered("failed", "PROVIDER_FAILED", errorClassOf(error));
  return error instanceof ProviderRefusal ? { ...failed, shown: signalMessage(error) } : failed;
}
