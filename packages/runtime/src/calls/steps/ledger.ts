import { ToolpactError, type ExecuteResult } from "@toolpact/contract";
import { errorClassOf } from "../../activity/error-class.js";
import { uuidv7 } from "../../ids.js";
import { targetIdOf } from "../../plugin-code/answers.js";
import type { ConsumedTokenRecord, OperationRecord } from "../../store/store.js";
import type { Call } from "../call.js";
import type { Next } from "../compose.js";
import { outcomeError, unanswered, type EffectOutcome, type ExecuteAnswer } from "../outcome.js";

/**
 * Steps 9 and 12: one transaction consumes the confirmation token, takes the idempotency key and begins
 * the operation (running, under this instance's lease) if the tenant's config is still the one steps
 * 2-7 decided under; then the effect steps run (`next`) and their outcome settles the operation in one
 * transaction with its events, staged reactions and idempotency outcome. Every operation that began is
 * settled, or, when the settle cannot be written, answered OUTCOME_UNKNOWN (never "failed" after an effect).
 */
export async function ledger(call: Call, next: Next<EffectOutcome>): Promise<ExecuteAnswer> {
  const { parts, principal, tool } = call;
  const { context, leases, sealed } = parts;
  const now = context.clock();
  const operationId = uuidv7(now);
  const operation: OperationRecord = {
    tenantId: principal.tenantId,
    operationId,
    callerPluginId: principal.callerPluginId,
    actorUserId: principal.actor.userId,
    providerPluginId: tool.providerId,
    tool: tool.fullName,
    state: "running",
    createdAt: now,
    leaseOwner: context.instanceId,
    leaseEpoch: 1,
    leaseExpiresAt: leases.expiry(now),
    ...(tool.declaration.recovery === "idempotent"
      ? { sealedInput: sealed.sealRecoveryInput(principal.tenantId, operationId, { input: call.input, actor: principal.actor, runId: call.runId }) }
      : {}),
  };
  const { keying, consumes } = call;
  const begun = await context.store.beginOperation({
    operation,
    tenantConfigVersion: call.tenant.version,
    ...(consumes === undefined ? {} : { consumeToken: consumes }),
    ...(keying === undefined
      ? {}
      : { idempotency: { scope: keying.scope, inputDigest: keying.inputDigest, expiresAt: now + context.idempotencyTtlMs } }),
  });
  switch (begun.status) {
    case "started":
      call.began({ operationId, leaseEpoch: 1 });
      return settle(call, next);
    case "config-changed":
      call.configChanged();
      return { retry: "config-changed" };
    case "idempotency-exists":
      return { retry: "replay", record: begun.record };
    case "token-used":
      throw tokenUsed(call, begun.consumed);
  }
}

/**
 * Recovery's steps 9 and 12: the lease of an expired operation was taken over (new owner, next epoch);
 * the effect steps run again under it, with the same operation id, and their outcome settles it.
 */
export function resumedLedger(call: Call, next: Next<EffectOutcome>): Promise<ExecuteAnswer> {
  return settle(call, next);
}

/** Runs the effect steps under the operation's lease and settles the operation with their outcome. */
async function settle(call: Call, next: Next<EffectOutcome>): Promise<ExecuteResult> {
  const { parts, principal, tool, trace } = call;
  const { context } = parts;
  const { operationId, leaseEpoch } = call.operation;
  const tenantId = principal.tenantId;
  parts.leases.hold({ tenantId, operationId, leaseEpoch });
  try {
    let outcome: EffectOutcome;
    try {
      outcome = await next();
    } catch (error) {
      // The effect steps answer with values; a throw is a bug, and the effect may have happened.
      outcome = unanswered("unknown", "OUTCOME_UNKNOWN", errorClassOf(error));
    }
    const targetId = outcome.answered ? targetIdOf(outcome.result) : undefined;
    const activity = trace.event(outcome.state, {
      operationId,
      ...(outcome.answered ? {} : { errorCode: outcome.errorCode }),
      ...(outcome.answered || outcome.errorClass === undefined ? {} : { errorClass: outcome.errorClass }),
      ...(targetId === undefined ? {} : { targetId }),
    });
    const record = call.settlesRecord;
    const kept = outcome.answered ? outcome.kept : undefined;
    const staged = outcome.staged;
    let settled: "settled" | "lease-lost" | "failed";
    try {
      settled = await context.store.settleOperation({
        tenantId,
        operationId,
        leaseOwner: context.instanceId,
        leaseEpoch,
        state: outcome.state,
        ...(outcome.answered ? {} : { errorCode: outcome.errorCode }),
        settledAt: context.clock(),
        activity,
        ...(staged === undefined || staged.events.length === 0 ? {} : { extraActivity: staged.events }),
        ...(staged === undefined || staged.outbox.length === 0 ? {} : { outbox: staged.outbox }),
        ...(record === undefined ? {} : { idempotency: { ...record, ...kept } }),
      });
    } catch (error) {
      context.logger.error({ event: "commit_failed", tool: tool.fullName, operationId, errorClass: errorClassOf(error) });
      settled = "failed";
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
    if (outcome.answered) return { operationId, result: outcome.result };
    throw outcomeError({ code: outcome.errorCode, tool: tool.fullName, operationId, errorClass: outcome.errorClass });
  } finally {
    parts.leases.release(operationId);
  }
}

/** CONFIRMATION_USED; only the caller and actor bound to the token learn which operation used it. */
function tokenUsed(call: Call, consumed: ConsumedTokenRecord): ToolpactError {
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
