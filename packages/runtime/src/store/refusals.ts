/** The refusals both stores give, in the same words. */
import { SETTLED_OPERATION_STATES, ToolpactError, isStateOf } from "@toolpact/contract";
import type { OperationRecord, OperationSettle } from "./store.js";

/** Work asked of a store after `close`. */
export function storeClosed(): ToolpactError {
  return new ToolpactError("SHUTTING_DOWN", "the store is closed: the runtime is shutting down or was closed");
}

/** Throws OUTCOME_UNKNOWN unless `settle` moves its operation to a final state. */
export function checkSettleState(settle: Pick<OperationSettle, "state" | "operationId">): void {
  if (!isStateOf(SETTLED_OPERATION_STATES, settle.state)) {
    throw new ToolpactError(
      "OUTCOME_UNKNOWN",
      `operation ${settle.operationId} cannot become ${String(settle.state)}: running -> succeeded | failed | unknown only`,
      { operationId: settle.operationId },
    );
  }
}

/** Throws unless `op` is written already settled: in a final state, with its settle time. */
export function checkWrittenSettled(op: OperationRecord): void {
  checkSettleState({ state: op.state as OperationSettle["state"], operationId: op.operationId });
  if (op.settledAt === undefined) throw new TypeError(`operation ${op.operationId} is written settled, so it needs settledAt`);
}

/**
 * Why a lease-guarded settle matched no row, from the operation's current state (undefined when it does
 * not exist): it throws OUTCOME_UNKNOWN for a missing or already settled operation; otherwise the lease was lost.
 */
export function unsettled(operationId: string, state: string | undefined): "lease-lost" {
  if (state === undefined) {
    throw new ToolpactError("OUTCOME_UNKNOWN", `operation ${operationId} does not exist in this tenant`, { operationId });
  }
  if (state !== "running") {
    throw new ToolpactError("OUTCOME_UNKNOWN", `operation ${operationId} is already ${state}: an operation goes running -> succeeded | failed | unknown once`, {
      operationId,
    });
  }
  return "lease-lost";
}
