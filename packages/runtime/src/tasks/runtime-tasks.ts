import type { RuntimeTasks } from "./task-api.js";
import { TaskService, type TaskServiceParts } from "./task-service.js";

/** A runtime's tasks: the service, its surface (each call tracked like any other call), and what stops it hearing decisions. */
export interface WiredTasks {
  readonly service: TaskService;
  readonly surface: RuntimeTasks;
  /** Stops hearing decided confirmation requests. */
  readonly unsubscribe: () => void;
}

/**
 * Makes a runtime's task service and wires it: its calls go through `track` (in-flight accounting and
 * the shutdown refusal), and a confirmation request decided on any instance moves its task on at once.
 */
export function wireTasks(parts: TaskServiceParts, track: <T>(work: () => Promise<T>) => Promise<T>): WiredTasks {
  const service = new TaskService(parts);
  const unsubscribe = parts.store.changes.subscribe((change) => {
    if (change.kind !== "confirmation") return;
    void track(() => service.confirmationDecided(change.tenantId, change.requestId)).catch(() => {});
  });
  return {
    service,
    unsubscribe,
    surface: {
      start: (principal, ref, input, options) => track(() => service.start(principal, ref, input, options)),
      get: (principal, taskId) => track(() => service.get(principal, taskId)),
      answer: (principal, taskId, answer) => track(() => service.answer(principal, taskId, answer)),
      cancel: (principal, taskId) => track(() => service.cancel(principal, taskId)),
    },
  };
}
