import { isToolpactError } from "@toolpact/contract";
import { errorClassOf } from "../../activity/error-class.js";
import { outputFailureClassOf, outputOf } from "../../plugin-code/answers.js";
import { TIMED_OUT } from "../../plugin-code/plugin-code-runner.js";
import type { CallAt } from "../call.js";
import { answered, unanswered, type EffectOutcome } from "../outcome.js";

/**
 * invoke-provider, the effect's first step. The provider's `execute` runs once, with the operation id, under the tool's
 * timeout; its answer is copied at once (what the provider does to its object later changes nothing).
 * A gate that answered the call stands in for the provider. A read that times out failed; a write or
 * external effect that times out, or whose provider throws OUTCOME_UNKNOWN, may have happened: its
 * outcome is unknown.
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
    // A provider may say itself that its effect may have happened (an isolated one whose process died mid-call).
    const mayHaveRun = error === TIMED_OUT || (isToolpactError(error) && error.code === "OUTCOME_UNKNOWN");
    const errorClass = error === TIMED_OUT ? "TimeoutError" : errorClassOf(error);
    const failed =
      mayHaveRun && declaration.effect !== "read" ? unanswered("unknown", "OUTCOME_UNKNOWN", errorClass) : unanswered("failed", "PROVIDER_FAILED", errorClass);
    parts.context.logger.warn({ event: "provider_failed", tool: fullName, operationId, errorClass: failed.errorClass, state: failed.state });
    return failed;
  }
  try {
    return answered(outputOf(answer));
  } catch (error) {
    return unanswered("succeeded", "OUTPUT_INVALID", outputFailureClassOf(error));
  }
}
