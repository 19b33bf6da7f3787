/** Waiting on a task through the runtime, as an agent polling `tasks/get` would (bounded, no timing assertions). */
import type { Principal, TaskView, ToolpactRuntime } from "../../../packages/runtime/src/index.js";

/** Polls `get` until `done` holds: at most 200 polls, 25 ms apart; answers the last view either way. */
export async function pollTask(runtime: ToolpactRuntime, principal: Principal, taskId: string, done: (task: TaskView) => boolean): Promise<TaskView> {
  let task = await runtime.tasks.get(principal, taskId);
  for (let poll = 0; poll < 200 && !done(task); poll++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    task = await runtime.tasks.get(principal, taskId);
  }
  return task;
}

/** True once a task is completed, failed or cancelled. */
export const ended = (task: { readonly status: string }): boolean => task.status === "completed" || task.status === "failed" || task.status === "cancelled";
