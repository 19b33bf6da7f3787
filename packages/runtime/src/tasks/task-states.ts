/**
 * The states of a task (MCP's `io.modelcontextprotocol/tasks`): `working` while the call waits to run or
 * runs, `input_required` while the client has to show the user the confirmation page, then once one of
 * `completed`, `failed`, `cancelled`. The one list the store's CHECKs and the service's transitions use.
 */
export const TASK_STATES = Object.freeze(["working", "input_required", "completed", "failed", "cancelled"] as const);

/** One of `TASK_STATES`. */
export type TaskStatus = (typeof TASK_STATES)[number];

/** The states a task never leaves. */
export const TERMINAL_TASK_STATES: ReadonlySet<TaskStatus> = new Set(["completed", "failed", "cancelled"]);

/** True for `completed`, `failed` and `cancelled`. */
export function isTerminalTask(status: TaskStatus): boolean {
  return TERMINAL_TASK_STATES.has(status);
}
