import type { SealedPayloads } from "../sealed/sealed-payloads.js";
import type { TaskRecord } from "../store/store.js";
import type { TaskOutcome, TaskView } from "./task-api.js";

/** How often a client is asked to poll, ms. */
export const TASK_POLL_INTERVAL_MS = 1000;

/** A task as its caller and user see it: the row, with its outcome opened. */
export function viewOfTask(record: TaskRecord, sealed: SealedPayloads): TaskView {
  const outcome =
    record.sealedOutcome === undefined ? undefined : (sealed.openTaskOutcome(record.tenantId, record.taskId, record.sealedOutcome) as TaskOutcome);
  const asking = record.status === "input_required" && record.confirmationId !== undefined && record.confirmUrl !== undefined;
  return {
    taskId: record.taskId,
    status: record.status,
    ...(record.statusMessage === undefined ? {} : { statusMessage: record.statusMessage }),
    tool: record.tool,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.updatedAt).toISOString(),
    ttlMs: record.expiresAt - record.createdAt,
    pollIntervalMs: TASK_POLL_INTERVAL_MS,
    ...(asking ? { confirmation: { requestId: record.confirmationId!, confirmUrl: record.confirmUrl! } } : {}),
    effectBegun: record.begun,
    cancelRequested: record.cancelRequestedAt !== undefined,
    ...(record.operationId === undefined ? {} : { operationId: record.operationId }),
    ...(outcome === undefined ? {} : { outcome }),
  };
}
