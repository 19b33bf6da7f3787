/**
 * Tasks as the runtime offers them (the MCP bridge's `io.modelcontextprotocol/tasks` rests on these): a
 * tool call whose wait for the user's approval, or for a slow provider, outlives one request. The task's
 * state lives in the store, so it survives a client that hangs up and a server that restarts, and every
 * instance sharing the database sees and moves it.
 */
import type { ToolRef, ToolpactErrorCode, ToolpactErrorData } from "@toolpact/contract";
import type { Principal } from "../api.js";
import type { TaskStatus } from "./task-states.js";

export type { TaskStatus } from "./task-states.js";

/** Options of `tasks.start`. */
export interface StartTaskOptions {
  /** How long the task is kept, ms (default 1 h; 10 s to 24 h). */
  readonly ttlMs?: number;
  /**
   * What the caller's tool listing says: `false` runs the call at once (a gate that still demands a
   * confirmation sends it the confirmed way); `true` or absent previews first.
   */
  readonly requiresConfirmation?: boolean;
}

/** How a task's call ended: its result, or the toolpact error that says what happened (and whether anything ran). */
export type TaskOutcome =
  | { readonly ok: true; readonly operationId: string; readonly result: unknown }
  | { readonly ok: false; readonly code: ToolpactErrorCode; readonly message: string; readonly data: ToolpactErrorData };

/** The platform confirmation request a task waits for, as the user's client shows it. */
export interface TaskConfirmation {
  readonly requestId: string;
  readonly confirmUrl: string;
}

/** A task as the caller and user that started it see it. */
export interface TaskView {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  /** The tool as called: `<providerId>:<tool>`, with `@<version>` when the call named one. */
  readonly tool: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  /** How long after `createdAt` the task may be discarded, ms. */
  readonly ttlMs: number;
  /** How often to ask again, ms. */
  readonly pollIntervalMs: number;
  /** While `input_required`: the confirmation page the user has to open (the key of the one input request). */
  readonly confirmation?: TaskConfirmation;
  /** True once the call was handed to execute: from then on an effect may have begun, and a cancel does not undo it. */
  readonly effectBegun: boolean;
  /** True when a cancel came after the call began (the task still ends with the call's outcome). */
  readonly cancelRequested: boolean;
  readonly operationId?: string;
  /** When `completed` (ok) or `failed` (the error): how the call ended. */
  readonly outcome?: TaskOutcome;
}

/** The client's answer to the task's input request (MCP `tasks/update`, a URL elicitation's action). */
export interface TaskInputAnswer {
  /** The input request's key: the confirmation request id. An answer to any other key is ignored. */
  readonly requestId: string;
  /** `accept`: the user was shown the page (the task waits for the decision made there); `decline`/`cancel`: withdraw, nothing runs. */
  readonly action: "accept" | "decline" | "cancel";
}

/** What `tasks.cancel` did. */
export interface TaskCancelAnswer {
  readonly task: TaskView;
  /** True when the call had already begun: what it did is not undone, and the task ends with its outcome. */
  readonly effectBegun: boolean;
  /** What happened, for people: nothing ran, or an effect already begun is not undone. */
  readonly message: string;
}

/** Tool calls as tasks, each visible only to the tenant, caller plugin and actor that started it. */
export interface RuntimeTasks {
  /**
   * Starts a task for a tool call, recorded before it answers. A call that needs the user's approval
   * answers `input_required` with the confirmation page; otherwise the call runs in the background.
   */
  start(principal: Principal, ref: ToolRef, input: unknown, options?: StartTaskOptions): Promise<TaskView>;
  /** The task now (moved on first if its approval arrived or its driver went away); PERMISSION_DENIED for a task not this principal's. */
  get(principal: Principal, taskId: string): Promise<TaskView>;
  /** The answer to the task's input request; answers to other keys, or when no input is asked for, change nothing. */
  answer(principal: Principal, taskId: string, answer: TaskInputAnswer): Promise<TaskView>;
  /** Cancels: withdraws a pending confirmation (nothing runs); a call already begun is not undone, and the answer says so. */
  cancel(principal: Principal, taskId: string): Promise<TaskCancelAnswer>;
}
