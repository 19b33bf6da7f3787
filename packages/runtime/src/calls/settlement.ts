/**
 * What step 12 writes for an operation's outcome, and what the caller then gets: shared by the ledger
 * (a write's settle) and by a read's single record.
 */
import type { ExecuteResult } from "@toolpact/contract";
import { errorClassOf } from "../activity/error-class.js";
import { targetIdOf } from "../plugin-code/answers.js";
import type { ActivityRecord, OperationRecord, OutboxRecord } from "../store/store.js";
import type { Call } from "./call.js";
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

/** The fields every operation record of this call has: whose it is, and which tool, under this instance's lease owner. */
export function operationOf(call: Call, operationId: string): Pick<OperationRecord, "tenantId" | "operationId" | "callerPluginId" | "actorUserId" | "providerPluginId" | "tool" | "leaseOwner"> {
  const { principal, tool } = call;
  return {
    tenantId: principal.tenantId,
    operationId,
    callerPluginId: principal.callerPluginId,
    actorUserId: principal.actor.userId,
    providerPluginId: tool.providerId,
    tool: tool.fullName,
    leaseOwner: call.parts.context.instanceId,
  };
}

/** Runs the effect steps. They answer with values; a throw is a bug, and the effect may have happened: unknown. */
export async function effectOf(next: Next<EffectOutcome>): Promise<EffectOutcome> {
  try {
    return await next();
  } catch (error) {
    return unanswered("unknown", "OUTCOME_UNKNOWN", errorClassOf(error));
  }
}

/** The call's event for `outcome`, and what its hooks staged, as the settle commits them. */
export function settlementOf(call: Call, outcome: EffectOutcome): Settlement {
  const { operationId } = call.operation;
  const targetId = outcome.answered ? targetIdOf(outcome.result) : undefined;
  const activity = call.trace.event(outcome.state, {
    operationId,
    ...(outcome.answered ? {} : { errorCode: outcome.errorCode }),
    ...(outcome.answered || outcome.errorClass === undefined ? {} : { errorClass: outcome.errorClass }),
    ...(targetId === undefined ? {} : { targetId }),
  });
  const staged = outcome.staged;
  return {
    activity,
    ...(staged === undefined || staged.events.length === 0 ? {} : { extraActivity: staged.events }),
    ...(staged === undefined || staged.outbox.length === 0 ? {} : { outbox: staged.outbox }),
  };
}

/** What the caller gets once `outcome` is recorded: the result, or the operation's error (with its id). */
export function answerOf(call: Call, outcome: EffectOutcome): ExecuteResult {
  const { operationId } = call.operation;
  if (outcome.answered) return { operationId, result: outcome.result };
  throw outcomeError({ code: outcome.errorCode, tool: call.tool.fullName, operationId, errorClass: outcome.errorClass });
}
