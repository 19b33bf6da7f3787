/**
 * Moving a platform request out of `pending` (approve, deny, cancel, expire): one transaction with its
 * activity event; when the store loses the answer, the request is read back before anyone is told.
 */
import { ToolpactError, parseToolFullName } from "@toolpact/contract";
import { errorClassOf } from "../activity/error-class.js";
import type { ActivityOutcome, ActivityPhase } from "../api.js";
import { uuidv7 } from "../ids.js";
import { readBackConfirmation } from "../ledger/lost-answers.js";
import type { Logger } from "../logger.js";
import type { ActivityRecord, ConfirmationRecord, ConfirmationTransition, Store } from "../store/store.js";
import { isUnansweredCommit, type UnansweredCommit } from "../store/unanswered-commit.js";

/** A change of a pending request, and how the activity log records it. */
export interface RequestChange {
  readonly change: Omit<ConfirmationTransition, "tenantId" | "requestId" | "activity">;
  readonly logged: { readonly phase: ActivityPhase; readonly outcome: ActivityOutcome; readonly grantId?: string };
}

/**
 * Applies a change to a pending request, recording it in the same transaction; the updated record, or
 * undefined when it no longer applied (decided, expired or withdrawn meanwhile).
 * @throws STORE_UNAVAILABLE when the store failed, or lost its answer and the change was not saved (or that cannot be told).
 */
export async function transitionRequest(
  store: Store,
  logger: Logger,
  request: { readonly record: ConfirmationRecord } & RequestChange,
): Promise<ConfirmationRecord | undefined> {
  const { record, change, logged } = request;
  const transition: ConfirmationTransition = {
    tenantId: record.tenantId,
    requestId: record.requestId,
    ...change,
    activity: eventOf(record, { ...logged, at: change.at }),
  };
  try {
    return await store.transitionConfirmation(transition);
  } catch (error) {
    if (!isUnansweredCommit(error)) {
      logger.error({ event: "confirmation_transition_failed", errorClass: errorClassOf(error) });
      throw error;
    }
    return readBack(store, logger, { transition, error });
  }
}

/**
 * A transition whose answer the store lost, read back: applied (the request is in its new state, decided
 * at its time), the decision stands; still pending, nothing was decided; decided otherwise, someone else
 * decided first.
 */
async function readBack(
  store: Store,
  logger: Logger,
  lost: { readonly transition: ConfirmationTransition; readonly error: UnansweredCommit },
): Promise<ConfirmationRecord | undefined> {
  const { transition } = lost;
  logger.warn({ event: "commit_answer_lost", step: transition.to, requestId: transition.requestId });
  const current = await readBackConfirmation(store, transition, lost.error);
  if (current === undefined || current.status === "pending") {
    throw new ToolpactError(
      "STORE_UNAVAILABLE",
      current === undefined
        ? "the store lost its answer and cannot tell yet whether this decision was saved: reload to see the request as it stands"
        : "the store lost its answer and the decision was not saved: nothing was decided; try again",
      { requestId: transition.requestId },
    );
  }
  return current.status === transition.to && current.decidedAt === transition.at ? current : undefined;
}

/** A request's change as an activity event of kind `confirmation`. */
function eventOf(record: ConfirmationRecord, logged: RequestChange["logged"] & { at: number }): ActivityRecord {
  const { phase, outcome, at, grantId } = logged;
  const parsed = parseToolFullName(record.tool);
  return {
    id: uuidv7(at),
    tenantId: record.tenantId,
    at,
    kind: "confirmation",
    actorUserId: record.actorUserId,
    callerPluginId: record.callerPluginId,
    providerPluginId: record.providerPluginId,
    tool: record.tool,
    ...(parsed === undefined ? {} : { version: parsed.version }),
    effect: record.effect,
    phase,
    outcome,
    ...(phase === "cancel" || phase === "deny" ? { errorCode: "CONFIRMATION_DENIED" } : {}),
    ...(phase === "expire" ? { errorCode: "CONFIRMATION_EXPIRED" } : {}),
    confirmationId: record.requestId,
    ...(grantId === undefined ? {} : { grantId }),
  };
}
