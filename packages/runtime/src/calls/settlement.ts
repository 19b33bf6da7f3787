/**
 * What the settle writes for an operation's outcome, and what the caller then gets: shared by the ledger
 * (a write's settle) and by a read's single record.
 */
import type { ExecuteResult } from "@toolpact/contract";
import type { EventDetails } from "../activity/call-trace.js";
import { errorClassOf } from "../activity/error-class.js";
import { targetIdOf } from "../plugin-code/answers.js";
import type { ActivityRecord, OperationRecord, OutboxRecord } from "../store/store.js";
import type { CallAt } from "./call.js";
import type { Next } from "./compose.js";
import { outcomeError, unanswered, type EffectOutcome } from "./outcome.js";

/** The rows committed with an operation's final state. */
export interface Settlement {
  /** The call's event, naming the operation. */
  readonly activity: ActivityRecord;
  /** Events of hooks that failed. */
  readonly extraActivity?: readonly ActivityRecord[];
  /** Reactions AfterTool hooks staged. */
  readonly outbox?: readonly OutboxRecord[];
}

/** What an operation record of this call says beyond whose it is (those come from the call). */
export type OperationFields = Pick<OperationRecord, "operationId" | "state" | "createdAt" | "leaseExpiresAt"> &
  Partial<Pick<OperationRecord, "errorCode" | "settledAt" | "sealedInput">>;

/** An operation record of this call: its caller, actor, provider and tool, this instance as lease owner at epoch 1, and `fields`. */
export function operationOf(call: CallAt<"tool">, fields: OperationFields): OperationRecord {
  const { principal, tool } = call;
  // Built in place rather than spread: this runs on every call.
  const record: { -readonly [K in keyof OperationRecord]: OperationRecord[K] } = {
    tenantId: principal.tenantId,
    operationId: fields.operationId,
    callerPluginId: principal.callerPluginId,
    actorUserId: principal.actor.userId,
    providerPluginId: tool.providerId,
    tool: tool.fullName,
    state: fields.state,
    createdAt: fields.createdAt,
    leaseOwner: call.parts.context.instanceId,
    leaseEpoch: 1,
    leaseExpiresAt: fields.leaseExpiresAt,
  };
  if (fields.errorCode !== undefined) record.errorCode = fields.errorCode;
  if (fields.settledAt !== undefined) record.settledAt = fields.settledAt;
  if (fields.sealedInput !== undefined) record.sealedInput = fields.sealedInput;
  return record;
}

/** Runs the effect. It answers with values; a throw is a bug, and the effect may have happened: unknown. */
export async function effectOf<C>(call: C, next: Next<C, EffectOutcome>): Promise<EffectOutcome> {
  try {
    return await next(call);
  } catch (error) {
    return unanswered("unknown", "OUTCOME_UNKNOWN", errorClassOf(error));
  }
}

/** The call's event for `outcome`, and what its hooks staged, as the settle commits them. */
export function settlementOf(call: CallAt<"tool" | "operation">, outcome: EffectOutcome): Settlement {
  const details: { -readonly [K in keyof EventDetails]: EventDetails[K] } = { operationId: call.operation.operationId };
  if (outcome.answered) {
    const targetId = targetIdOf(outcome.result);
    if (targetId !== undefined) details.targetId = targetId;
  } else {
    details.errorCode = outcome.errorCode;
    if (outcome.errorClass !== undefined) details.errorClass = outcome.errorClass;
  }
  const settlement: { -readonly [K in keyof Settlement]: Settlement[K] } = { activity: call.trace.event(outcome.state, details) };
  const staged = outcome.staged;
  if (staged !== undefined && staged.events.length > 0) settlement.extraActivity = staged.events;
  if (staged !== undefined && staged.outbox.length > 0) settlement.outbox = staged.outbox;
  return settlement;
}

/** What the caller gets once `outcome` is recorded: the result, or the operation's error (with its id). */
export function answerOf(call: CallAt<"tool" | "operation">, outcome: EffectOutcome): ExecuteResult {
  const { operationId } = call.operation;
  if (outcome.answered) return { operationId, result: outcome.result };
  throw outcomeError({ code: outcome.errorCode, tool: call.tool.fullName, operationId, errorClass: outcome.errorClass, shown: outcome.shown });
}
