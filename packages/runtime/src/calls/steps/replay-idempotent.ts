import { ToolpactError } from "@toolpact/contract";
import { idempotencyKeying, guardSetOf, type IdempotencyKeying } from "../../ledger/idempotency.js";
import { outputOf } from "../../plugin-code/answers.js";
import { runGuards } from "../../plugin-code/guards.js";
import type { IdempotencyRecord } from "../../store/store.js";
import type { CallAt } from "../call.js";
import type { Next, StepOf } from "../chain.js";
import { isOperationErrorCode, isRetry, outcomeError, type ExecuteAnswer, type OperationErrorCode } from "../outcome.js";

type Reads = "tool" | "input" | "seams";
type Keyed = CallAt<Reads | "keying">;

/**
 * replay-idempotent: an execute with an idempotency key that was already used (for this caller, actor
 * and tool) answers with the recorded outcome, without running again and before any confirmation is
 * checked; a record that appears while this call goes on (another call with the key won the race) is
 * replayed the same way.
 */
export const replayIdempotent: StepOf<ExecuteAnswer, Reads, "keying"> = function replayIdempotent(call, next) {
  const key = call.options.idempotencyKey;
  if (key === undefined) return next(call.keyed(undefined));
  const { parts, principal, tool } = call;
  const keying = idempotencyKeying({ principal, tool: tool.fullName, input: call.input, digestKey: parts.context.idempotencyDigestKey }, key);
  call.trace.keyedBy(keying.scope.keyHash);
  return replayOr(call.keyed(keying), keying, next);
};

async function replayOr(call: Keyed, keying: IdempotencyKeying, next: Next<Keyed, ExecuteAnswer>): Promise<ExecuteAnswer> {
  const { parts } = call;
  const existing = await parts.context.store.findIdempotency(keying.scope, parts.context.clock());
  if (existing !== undefined) return replay(call, keying, existing);
  const answer = await next(call);
  return isRetry(answer) && answer.retry === "replay" ? replay(call, keying, answer.record) : answer;
}

/** The recorded outcome as the caller gets it, under today's guards (they may have changed since). */
async function replay(call: Keyed, keying: IdempotencyKeying, record: IdempotencyRecord): Promise<ExecuteAnswer> {
  const { parts, principal, tool, trace } = call;
  const fullName = tool.fullName;
  if (record.inputDigest !== keying.inputDigest) {
    throw new ToolpactError("IDEMPOTENCY_CONFLICT", `this idempotency key was used for ${fullName} with a different input: use a new key for a new call`, {
      tool: fullName,
    });
  }
  const operationId = record.operationId;
  trace.confirmedBy(undefined);
  if (record.state === "running") {
    throw new ToolpactError(
      "OPERATION_IN_PROGRESS",
      `operation ${operationId} with this idempotency key is still running: read it with tools.operation, or retry later`,
      { tool: fullName, operationId },
    );
  }
  if (record.state === "succeeded" && record.errorCode === undefined) {
    const sealed = record.sealedResult;
    let result = outputOf(sealed === undefined ? undefined : parts.sealed.openResult(principal.tenantId, operationId, sealed));
    const seams = call.seams;
    if (seams.guards.length > 0 && record.guardSet !== guardSetOf(seams)) {
      // Guards were activated, removed or reordered since the result was recorded: today's guards decide.
      const verdict = await runGuards(parts.pluginCode, { principal, tool, input: call.input, seams, operationId, output: result });
      if (!verdict.ok) {
        trace.decidedBy(verdict.seam);
        throw outcomeError({ code: verdict.errorCode, tool: fullName, operationId, errorClass: verdict.errorClass });
      }
      result = verdict.output;
    }
    await trace.record("succeeded", { operationId });
    return { operationId, result };
  }
  const code: OperationErrorCode =
    record.errorCode !== undefined && isOperationErrorCode(record.errorCode)
      ? record.errorCode
      : record.state === "unknown"
        ? "OUTCOME_UNKNOWN"
        : "PROVIDER_FAILED";
  throw outcomeError({ code, tool: fullName, operationId, errorClass: undefined });
}
