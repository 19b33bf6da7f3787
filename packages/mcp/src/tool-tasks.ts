/**
 * MCP tasks (`io.modelcontextprotocol/tasks`, SEP-2663) on the 2026-07-28 revision, over the runtime's
 * tasks (their state is the operation ledger: it survives a client that hangs up and a server restart,
 * and every instance sees it). A client that declares the extension in a request's capabilities gets a
 * task for a `tools/call` that may wait (a tool that needs the user's approval, or that writes or acts
 * outside): `tasks/get` shows it, with the confirmation page as a URL input request while the user has to
 * approve; `tasks/update` carries the client's answer to that request; `tasks/cancel` withdraws a pending
 * confirmation (an effect already begun is not undone, and the answer's `_meta` says so).
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  inputRequired,
  type CallToolResult,
  type Server,
  type ServerContext,
  type StandardSchemaV1,
} from "@modelcontextprotocol/server";
import { ToolpactError, isToolpactError, type ToolRef } from "@toolpact/contract";
import type { Logger, Principal, Runtime, TaskCancelAnswer, TaskInputAnswer, TaskView, ToolListing } from "@toolpact/runtime";
import type { ToolBackend } from "./tool-backend.js";
import { createToolLookup } from "./tool-lookup.js";
import { outputResult, refusalResult } from "./tool-results.js";

/** The extension's identifier, in capabilities on both sides. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
/** `_meta` key of what a `tasks/cancel` did: whether the call had begun, and what that means. */
export const CANCEL_META_KEY = "toolpact/cancel";

/** The runtime's tasks for the caller and user of one request. */
export interface TaskBackend {
  start(ref: ToolRef, input: unknown, options: { readonly requiresConfirmation: boolean }): Promise<TaskView>;
  get(taskId: string): Promise<TaskView>;
  answer(taskId: string, answer: TaskInputAnswer): Promise<TaskView>;
  cancel(taskId: string): Promise<TaskCancelAnswer>;
}

/** The runtime's tasks, for the principal one request authenticated. */
export function createRuntimeTasks(runtime: Runtime, principal: Principal): TaskBackend {
  return {
    start: (ref, input, options) => runtime.tasks.start(principal, ref, input, options),
    get: (taskId) => runtime.tasks.get(principal, taskId),
    answer: (taskId, answer) => runtime.tasks.answer(principal, taskId, answer),
    cancel: (taskId) => runtime.tasks.cancel(principal, taskId),
  };
}

/** The capabilities a 2026-07-28 request's `_meta` envelope declares for the client. */
function clientCapabilitiesOf(ctx: ServerContext): { extensions?: Record<string, unknown>; elicitation?: { url?: unknown } } | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown>; elicitation?: { url?: unknown } } | undefined;
}

/** True when the request declares the tasks extension (never return a task to a request that does not). */
export function declaresTasks(ctx: ServerContext): boolean {
  return clientCapabilitiesOf(ctx)?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/**
 * Whether a `tools/call` becomes a task: the client declared the extension, the call is a first call (not
 * a retry of an `input_required` round), and the tool may wait (it needs approval, which the client can
 * show as a URL; or it writes or acts outside). A read answers at once.
 */
export function wantsTask(ctx: ServerContext, tool: ToolListing): boolean {
  if (!declaresTasks(ctx) || ctx.mcpReq.inputResponses !== undefined || ctx.mcpReq.requestState<unknown>() !== undefined) return false;
  if (tool.requiresConfirmation) return clientCapabilitiesOf(ctx)?.elicitation?.url !== undefined;
  return tool.effect !== "read";
}

/**
 * A `tools/call` as a task, when `wantsTask` says so: the task is recorded before this answers (its first
 * step done: waiting for the user, or running). Undefined: the call goes the usual way (a name this caller
 * has no tool by is refused there). A refusal before the task exists is a tool error, as for any call.
 */
export async function startTask(
  tasks: TaskBackend,
  backend: ToolBackend,
  params: { readonly name: string; readonly arguments?: Record<string, unknown> | undefined },
  ctx: ServerContext,
): Promise<Record<string, unknown> | CallToolResult | undefined> {
  if (!declaresTasks(ctx)) return undefined;
  const tool = await createToolLookup(backend).find(params.name);
  if (tool === undefined || !wantsTask(ctx, tool)) return undefined;
  const ref: ToolRef = { providerId: tool.providerId, tool: tool.name, version: tool.version };
  try {
    return createTaskResult(await tasks.start(ref, params.arguments ?? {}, { requiresConfirmation: tool.requiresConfirmation }));
  } catch (error) {
    if (isToolpactError(error)) return refusalResult(error);
    throw error;
  }
}

/** A started task as the `CreateTaskResult` of a `tools/call`. */
export function createTaskResult(view: TaskView): Record<string, unknown> {
  return { resultType: "task", ...taskBase(view) };
}

/** The fields every task answer carries (the runtime's `failed` is MCP's `completed` with a tool error: see `detailedTask`). */
function taskBase(view: TaskView): Record<string, unknown> {
  return {
    taskId: view.taskId,
    status: view.status === "failed" ? "completed" : view.status,
    ...(view.statusMessage === undefined ? {} : { statusMessage: view.statusMessage }),
    createdAt: view.createdAt,
    lastUpdatedAt: view.lastUpdatedAt,
    ttlMs: view.ttlMs,
    pollIntervalMs: view.pollIntervalMs,
  };
}

/**
 * A task as `tasks/get` answers it: while the user has to approve, the confirmation page as one URL input
 * request keyed by the confirmation request's id (unique over the task's life); once done, the
 * `CallToolResult` the call would have answered. A toolpact refusal (denied, expired, the provider failed)
 * is a tool error, so the task is `completed` with `isError`: `failed` is kept for JSON-RPC errors (SEP-2663).
 */
export function detailedTask(view: TaskView): Record<string, unknown> {
  const base = taskBase(view);
  if (view.status === "input_required" && view.confirmation !== undefined) {
    const message = `Approve or deny "${view.tool}" on toolpact's confirmation page. Nothing runs until you approve it there; then this task runs it.`;
    return { ...base, inputRequests: { [view.confirmation.requestId]: inputRequired.elicitUrl({ message, url: view.confirmation.confirmUrl }) } };
  }
  const outcome = view.outcome;
  if (outcome === undefined || (view.status !== "completed" && view.status !== "failed")) return base;
  const result: CallToolResult = outcome.ok
    ? outputResult({ operationId: outcome.operationId, result: outcome.result })
    : refusalResult(new ToolpactError(outcome.code, outcome.message, outcome.data));
  return { ...base, result };
}

/** A Standard Schema for the params of one tasks method (the SDK validates params before the handler runs). */
function paramsSchema<T>(method: string, check: (params: Record<string, unknown>) => T | string): StandardSchemaV1<unknown, T> {
  return {
    "~standard": {
      version: 1,
      vendor: "toolpact",
      validate(value) {
        const params = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
        const checked = params === undefined ? `${method} takes an object of params` : check(params);
        return typeof checked === "string" ? { issues: [{ message: checked }] } : { value: checked };
      },
    },
  };
}

const taskIdOf = (method: string) => (params: Record<string, unknown>) =>
  typeof params.taskId === "string" && params.taskId !== "" ? { taskId: params.taskId } : `${method} needs params.taskId: the id a tools/call answered`;

const GET = paramsSchema("tasks/get", taskIdOf("tasks/get"));
const CANCEL = paramsSchema("tasks/cancel", taskIdOf("tasks/cancel"));
// The SDK lifts `inputResponses` out of the params of a 2026-07-28 request (`ctx.mcpReq.inputResponses`).
const UPDATE = paramsSchema("tasks/update", taskIdOf("tasks/update"));

/** Options of `registerTaskMethods`. */
export interface TaskMethodsOptions {
  /** The tasks of the request's caller and user. */
  readonly tasksOf: (ctx: ServerContext) => TaskBackend;
  readonly logger: Logger;
}

/** Registers `tasks/get`, `tasks/update` and `tasks/cancel` on a 2026-07-28 server. */
export function registerTaskMethods(server: Server, options: TaskMethodsOptions): void {
  const run = async <T>(ctx: ServerContext, method: string, work: (tasks: TaskBackend) => Promise<T>): Promise<T> => {
    if (!declaresTasks(ctx)) {
      throw new MissingRequiredClientCapabilityError(
        { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
        `${method} needs the ${TASKS_EXTENSION} extension in the request's client capabilities`,
      );
    }
    try {
      return await work(options.tasksOf(ctx));
    } catch (error) {
      throw taskError(error, method, options.logger);
    }
  };
  server.setRequestHandler("tasks/get", { params: GET }, (params, ctx) => run(ctx, "tasks/get", async (tasks) => detailedTask(await tasks.get(params.taskId))));
  server.setRequestHandler("tasks/update", { params: UPDATE }, (params, ctx) =>
    run(ctx, "tasks/update", async (tasks) => {
      const responses = Object.entries(ctx.mcpReq.inputResponses ?? {});
      if (responses.length === 0) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, "tasks/update needs params.inputResponses: the answers to the task's inputRequests, by key");
      }
      // Answers to keys the task does not ask (never issued, already answered) change nothing (SEP-2663).
      for (const [key, response] of responses) {
        const action = (response as { action?: unknown } | null)?.action;
        if (action === "accept" || action === "decline" || action === "cancel") await tasks.answer(params.taskId, { requestId: key, action });
        else await tasks.get(params.taskId);
      }
      return {};
    }),
  );
  server.setRequestHandler("tasks/cancel", { params: CANCEL }, (params, ctx) =>
    run(ctx, "tasks/cancel", async (tasks) => {
      const answer = await tasks.cancel(params.taskId);
      return { _meta: { [CANCEL_META_KEY]: { effectBegun: answer.effectBegun, message: answer.message } } };
    }),
  );
}

/** A refusal of a tasks method: an unknown (or not this caller's) task is Invalid params, as SEP-2663 asks. */
function taskError(error: unknown, method: string, logger: Logger): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (isToolpactError(error) && (error.code === "PERMISSION_DENIED" || error.code === "INPUT_INVALID")) {
    return new ProtocolError(ProtocolErrorCode.InvalidParams, `Task not found: ${error.message}`);
  }
  if (isToolpactError(error)) return new ProtocolError(ProtocolErrorCode.InternalError, `${error.code}: ${error.message}`);
  logger.error({ event: "mcp_request_failed_unexpectedly", method, errorClass: (error as Error)?.constructor?.name ?? typeof error });
  return new ProtocolError(ProtocolErrorCode.InternalError, "internal error: the request failed unexpectedly; the server log has the details");
}
