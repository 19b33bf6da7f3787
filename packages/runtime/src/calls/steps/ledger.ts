import { ToolpactError, type ExecuteResult } from "@toolpact/contract";
import { errorClassOf } from "../../activity/error-class.js";
import { uuidv7 } from "../../ids.js";
import { readBackOperation } from "../../ledger/lost-answers.js";
import type { ConsumedTokenRecord, OperationBegin, OperationBeginResult } from "../../store/store.js";
import { isUnansweredCommit } from "../../store/unanswered-commit.js";
import type { CallAt } from "../call.js";
import type { Boundary, Next } from "../chain.js";
import type { EffectOutcome, ExecuteAnswer } from "../outcome.js";
import { answerOf, effectOf, operationOf, settlementOf } from "../settlement.js";

type Reads = "tenant" | "tool" | "input" | "keying" | "consumes";
/** What the settle reads. */
type Settling = CallAt<"tool" | "operation">;

/**
 * ledger, around the effect: one transaction (the begin) consumes the confirmation token, takes the
 * idempotency key and begins the operation (running, under this instance's lease) if the tenant's config
 * is still the one the authorization steps decided under; then the effect runs (`next`) and its outcome
 * settles the operation in one transaction with its events, staged reactions and idempotency outcome. Every operation that began is
 * settled, or, when the settle cannot be written, answered OUTCOME_UNKNOWN (never "failed" after an effect).
 * The operation id is made before the begin: when the store loses the answer to either commit, the
 * operation is read back by that id before the call answers.
 */
export const ledger: Boundary<ExecuteAnswer, EffectOutcome, Reads, "operation"> = async function ledger(call, next) {
  const { parts, principal, tool } = call;
  const { context, leases, sealed } = parts;
  const now = context.clock();
  const operationId = uuidv7(now);
  const operation = operationOf(call, {
    operationId,
    state: "running",
    createdAt: now,
    leaseExpiresAt: leases.expiry(now),
    ...(tool.declaration.recovery === "idempotent"
      ? { sealedInput: sealed.sealRecoveryInput(principal.tenantId, operationId, { input: call.input, actor: principal.actor, runId: call.runId }) }
      : {}),
  });
  const { keying, consumes } = call;
  const begun = await begin(call, {
    operation,
    tenantConfigVersion: call.tenant.version,
    ...(consumes === undefined ? {} : "grant" in consumes ? { useGrant: consumes.grant } : { consumeToken: consumes }),
    ...(keying === undefined ? {} : { idempotency: { scope: keying.scope, inputDigest: keying.inputDigest, expiresAt: now + context.idempotencyTtlMs } }),
  });
  switch (begun.status) {
    case "started":
      return settle(call.began({ operationId, leaseEpoch: 1, settles: keying === undefined ? undefined : { scope: keying.scope } }), next);
    case "config-changed":
      // Decided again from the start: no token is consumed by this attempt.
      call.trace.confirmedBy(undefined);
      call.trace.grantedBy(undefined);
      return { retry: "config-changed" };
    case "idempotency-exists":
      return { retry: "replay", record: begun.record };
    case "token-used":
      throw tokenUsed(call, begun.consumed);
    case "grant-ended":
      throw new ToolpactError(
        "CONFIRMATION_REQUIRED",
        `${tool.fullName}: the grant that covered this call ended before it began (used up, revoked or expired); nothing ran: confirm the call`,
        { tool: tool.fullName },
      );
  }
};

/**
 * The begin transaction. When its answer was lost, the operation is read back: begun (as this call's,
 * running under this instance's lease), the call goes on; absent, nothing ran.
 */
async function begin(call: CallAt<never>, write: OperationBegin): Promise<OperationBeginResult> {
  const { store, logger } = call.parts.context;
  try {
    return await store.beginOperation(write);
  } catch (error) {
    if (!isUnansweredCommit(error)) throw error;
    const operation = write.operation;
    const { tenantId, operationId, tool } = operation;
    logger.warn({ event: "commit_answer_lost", step: "begin", tool, operationId });
    const found = await readBackOperation(store, { tenantId, operationId, tool }, error);
    if (found === undefined) {
      throw new ToolpactError("STORE_UNAVAILABLE", `the store lost its answer and ${tool} was not recorded as begun: nothing ran; retry shortly`, { tool });
    }
    if (found.state !== "running" || found.leaseOwner !== operation.leaseOwner || found.leaseEpoch !== operation.leaseEpoch) {
      // Begun, and already taken over or settled elsewhere: whatever happened is for tools.operation to tell.
      throw new ToolpactError(
        "OUTCOME_UNKNOWN",
        `operation ${operationId} of ${tool} began, but the store lost its answer and the operation is no longer this call's: ` +
          "read it with tools.operation before retrying",
        { tool, operationId },
      );
    }
    return { status: "started" };
  }
}

/**
 * The ledger of a recovered operation: its lease was taken over (new owner, next epoch); the effect runs
 * again under it, with the same operation id, and its outcome settles it.
 */
export const resumedLedger: Boundary<ExecuteAnswer, EffectOutcome, "tool" | "operation"> = function resumedLedger(call, next) {
  return settle(call, next);
};

/** Runs the effect under the operation's lease and settles the operation with its outcome. */
async function settle<C extends Settling>(call: C, next: Next<C, EffectOutcome>): Promise<ExecuteResult> {
  const { parts, principal, tool, trace } = call;
  const { context } = parts;
  const { operationId, leaseEpoch } = call.operation;
  const tenantId = principal.tenantId;
  parts.leases.hold({ tenantId, operationId, leaseEpoch });
  try {
    const outcome = await effectOf(call, next);
    const record = call.operation.settles;
    const kept = outcome.answered ? outcome.kept : undefined;
    const settledAt = context.clock();
    let settled: "settled" | "lease-lost" | "failed";
    try {
      settled = await context.store.settleOperation({
        tenantId,
        operationId,
        leaseOwner: context.instanceId,
        leaseEpoch,
        state: outcome.state,
        ...(outcome.answered ? {} : { errorCode: outcome.errorCode }),
        settledAt,
        ...settlementOf(call, outcome),
        ...(record === undefined ? {} : { idempotency: { ...record, ...kept } }),
      });
    } catch (error) {
      settled = "failed";
      if (isUnansweredCommit(error)) {
        context.logger.warn({ event: "commit_answer_lost", step: "settle", tool: tool.fullName, operationId });
        const found = await readBackOperation(context.store, { tenantId, operationId, tool: tool.fullName }, error).catch(() => undefined);
        if (found?.state === outcome.state && found.settledAt === settledAt && found.leaseEpoch === leaseEpoch) settled = "settled";
      } else {
        context.logger.error({ event: "commit_failed", tool: tool.fullName, operationId, errorClass: errorClassOf(error) });
      }
    }
    if (settled !== "settled") {
      if (settled === "lease-lost") context.logger.warn({ event: "lease_lost", tool: tool.fullName, operationId });
      throw new ToolpactError(
        "OUTCOME_UNKNOWN",
        `${tool.fullName} ran but its outcome could not be recorded; operation ${operationId} is settled by recovery: ` +
          "read it with tools.operation before retrying",
        { tool: tool.fullName, operationId },
      );
    }
    trace.committed();
    return answerOf(call, outcome);
  } finally {
    parts.leases.release(operationId);
  }
}

/** CONFIRMATION_USED; only the caller and actor bound to the token learn which operation used it. */
function tokenUsed(call: CallAt<"tool">, consumed: ConsumedTokenRecord): ToolpactError {
  const { principal, tool } = call;
  const bound = consumed.callerPluginId === principal.callerPluginId && consumed.actorUserId === principal.actor.userId;
  return new ToolpactError(
    "CONFIRMATION_USED",
    `this confirmation for ${tool.fullName} was already used` +
      (bound ? ` by operation ${consumed.operationId}: read its outcome with tools.operation` : "") +
      "; preview again to confirm another call",
    bound ? { tool: tool.fullName, operationId: consumed.operationId } : { tool: tool.fullName },
  );
}
