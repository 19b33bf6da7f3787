import { ToolpactError } from "@toolpact/contract";
import { uuidv7 } from "../../ids.js";
import { readBackOperation } from "../../ledger/lost-answers.js";
import type { SettledOperationResult, SettledOperationWrite } from "../../store/store.js";
import { isUnansweredCommit } from "../../store/unanswered-commit.js";
import type { CallAt } from "../call.js";
import type { Boundary } from "../chain.js";
import type { EffectOutcome, ExecuteAnswer } from "../outcome.js";
import { answerOf, effectOf, operationOf, settlementOf } from "../settlement.js";

/**
 * True for a call whose begin and settle are one transaction after the effect: a `read` tool (nothing to
 * recover) with no confirmation token to consume and no idempotency key to reserve before it runs.
 */
export function recordsOnce(call: CallAt<"tool" | "keying" | "consumes">): boolean {
  return call.tool.declaration.effect === "read" && call.consumes === undefined && call.keying === undefined;
}

/**
 * record-read, around the effect of a read: the effect runs first, under an operation id made now; then
 * one transaction writes the operation already settled, with its event and staged reactions, if the
 * tenant's config is still the one the authorization steps decided under (else the call is decided
 * again, and the result is not handed out). When the store loses the answer, the operation is read back
 * before the call answers.
 */
export const recordRead: Boundary<ExecuteAnswer, EffectOutcome, "tenant" | "tool", "operation"> = async function recordRead(call, next) {
  const { context } = call.parts;
  const createdAt = context.clock();
  const operationId = uuidv7(createdAt);
  const running = call.began({ operationId, leaseEpoch: 1, settles: undefined });
  const outcome = await effectOf(running, next);
  const settledAt = context.clock();
  const operation = operationOf(call, {
    operationId,
    state: outcome.state,
    ...(outcome.answered ? {} : { errorCode: outcome.errorCode }),
    createdAt,
    settledAt,
    leaseExpiresAt: settledAt,
  });
  const recorded = await record(call, { operation, tenantConfigVersion: call.tenant.version, ...settlementOf(running, outcome) });
  if (recorded.status === "config-changed") {
    call.trace.confirmedBy(undefined);
    return { retry: "config-changed" };
  }
  call.trace.committed();
  return answerOf(running, outcome);
};

/** The one transaction; when its answer was lost, the operation is read back: found, it was recorded. */
async function record(call: CallAt<never>, write: SettledOperationWrite): Promise<SettledOperationResult> {
  const { store, logger } = call.parts.context;
  try {
    return await store.recordSettledOperation(write);
  } catch (error) {
    if (!isUnansweredCommit(error)) throw error;
    const { tenantId, operationId, tool } = write.operation;
    logger.warn({ event: "commit_answer_lost", step: "record", tool, operationId });
    if ((await readBackOperation(store, { tenantId, operationId, tool }, error)) !== undefined) return { status: "recorded" };
    throw new ToolpactError("STORE_UNAVAILABLE", `the store lost its answer and this read of ${tool} was not recorded: its result is withheld; retry shortly`, {
      tool,
    });
  }
}
