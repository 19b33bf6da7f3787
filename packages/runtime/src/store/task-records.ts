/**
 * A task as the store keeps it, and its row mapping (both stores). The call's input, the actor's level and
 * roles, and the outcome are sealed (the store never sees them in plaintext); the rest names who may read
 * the task and where its call stands. Every write after the insert is a compare-and-set on `revision`.
 */
import type { TaskStatus } from "../tasks/task-states.js";
import { buffer, bytes, defined, num, str, type Row } from "./rows.js";

/** One task row. */
export interface TaskRecord {
  readonly tenantId: string;
  readonly taskId: string;
  readonly callerPluginId: string;
  readonly actorUserId: string;
  /** The plugin key the task was started with (checked again whenever the call runs); absent in process. */
  readonly keyId?: string;
  /** The tool as called: `<providerId>:<tool>` with `@<version>` when the call named one. */
  readonly tool: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  /** The platform confirmation request the call waits for, when it needs one. */
  readonly confirmationId?: string;
  readonly confirmUrl?: string;
  /** True once the call was handed to execute: from then on an effect may have begun. */
  readonly begun: boolean;
  readonly cancelRequestedAt?: number;
  readonly operationId?: string;
  readonly errorCode?: string;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly expiresAt: number;
  /** The instance driving the call now, until `driverUntil` (0: nobody). */
  readonly driver?: string;
  readonly driverUntil: number;
  /** Moves by one on every write. */
  readonly revision: number;
  readonly sealedCall: Uint8Array;
  readonly sealedOutcome?: Uint8Array;
}

/** The columns of `tasks`, in the order of `taskValues`. */
export const TASK_COLUMNS =
  "tenant_id, task_id, caller_plugin_id, actor_user_id, key_id, tool, task_status, status_message, confirmation_id, confirm_url, " +
  "begun, cancel_requested_at, operation_id, error_code, created_at, updated_at, expires_at, driver, driver_until, revision, " +
  "sealed_call, sealed_outcome";

/** The columns a write after the insert may change, in the order of `taskChangeValues`. */
export const TASK_CHANGED_COLUMNS = [
  "task_status",
  "status_message",
  "confirmation_id",
  "confirm_url",
  "begun",
  "cancel_requested_at",
  "operation_id",
  "error_code",
  "updated_at",
  "expires_at",
  "driver",
  "driver_until",
  "revision",
  "sealed_outcome",
] as const;

/** A record's values in the order of `TASK_COLUMNS` (`begun` as the store's boolean: SQLite 0/1). */
export function taskValues(task: TaskRecord, booleans: "integer" | "boolean"): unknown[] {
  return [
    task.tenantId,
    task.taskId,
    task.callerPluginId,
    task.actorUserId,
    task.keyId ?? null,
    task.tool,
    task.status,
    task.statusMessage ?? null,
    task.confirmationId ?? null,
    task.confirmUrl ?? null,
    booleans === "integer" ? (task.begun ? 1 : 0) : task.begun,
    task.cancelRequestedAt ?? null,
    task.operationId ?? null,
    task.errorCode ?? null,
    task.createdAt,
    task.updatedAt,
    task.expiresAt,
    task.driver ?? null,
    task.driverUntil,
    task.revision,
    buffer(task.sealedCall),
    buffer(task.sealedOutcome),
  ];
}

/** A record's values in the order of `TASK_CHANGED_COLUMNS`. */
export function taskChangeValues(task: TaskRecord, booleans: "integer" | "boolean"): unknown[] {
  return [
    task.status,
    task.statusMessage ?? null,
    task.confirmationId ?? null,
    task.confirmUrl ?? null,
    booleans === "integer" ? (task.begun ? 1 : 0) : task.begun,
    task.cancelRequestedAt ?? null,
    task.operationId ?? null,
    task.errorCode ?? null,
    task.updatedAt,
    task.expiresAt,
    task.driver ?? null,
    task.driverUntil,
    task.revision,
    buffer(task.sealedOutcome),
  ];
}

/** A `tasks` row. */
export function taskFromRow(row: Row): TaskRecord {
  return defined<TaskRecord>({
    tenantId: String(row.tenant_id),
    taskId: String(row.task_id),
    callerPluginId: String(row.caller_plugin_id),
    actorUserId: String(row.actor_user_id),
    keyId: str(row.key_id),
    tool: String(row.tool),
    status: String(row.task_status) as TaskStatus,
    statusMessage: str(row.status_message),
    confirmationId: str(row.confirmation_id),
    confirmUrl: str(row.confirm_url),
    begun: row.begun === true || row.begun === 1,
    cancelRequestedAt: num(row.cancel_requested_at),
    operationId: str(row.operation_id),
    errorCode: str(row.error_code),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    expiresAt: Number(row.expires_at),
    driver: str(row.driver),
    driverUntil: Number(row.driver_until),
    revision: Number(row.revision),
    sealedCall: bytes(row.sealed_call) ?? new Uint8Array(),
    sealedOutcome: bytes(row.sealed_outcome),
  });
}
