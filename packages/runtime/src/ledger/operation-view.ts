import { ID_MAX_LENGTH, ToolpactError } from "@toolpact/contract";
import type { OperationView, Principal } from "../api.js";
import type { Store } from "../store/store.js";

/**
 * An operation, only for the tenant, caller and actor that started it. Anyone else gets the same
 * PERMISSION_DENIED as for an id that does not exist, so ids leak nothing.
 */
export async function readOperation(store: Store, principal: Principal, operationId: string): Promise<OperationView> {
  const record = typeof operationId === "string" && operationId.length <= ID_MAX_LENGTH ? await store.getOperation(principal.tenantId, operationId) : undefined;
  if (record === undefined || record.callerPluginId !== principal.callerPluginId || record.actorUserId !== principal.actor.userId) {
    throw new ToolpactError(
      "PERMISSION_DENIED",
      `no operation "${String(operationId).slice(0, ID_MAX_LENGTH)}" is visible to this caller and user: ` +
        "an operation is visible only to the caller and user that started it",
    );
  }
  return {
    operationId: record.operationId,
    tool: record.tool,
    state: record.state,
    ...(record.errorCode === undefined ? {} : { errorCode: record.errorCode }),
    createdAt: new Date(record.createdAt).toISOString(),
    ...(record.settledAt === undefined ? {} : { settledAt: new Date(record.settledAt).toISOString() }),
  };
}
