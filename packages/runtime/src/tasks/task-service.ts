/**
 * Tasks on the ledger: each task is a row (see `TaskRecord`) moved on by whichever instance sees it
 * can move: the one that started it, one that answers a `get`, one that hears its confirmation decided,
 * or the periodic sweep after a restart. Every write is a compare-and-set on the row's revision, and
 * the call itself runs under the idempotency key `task:<taskId>`, so however many instances try, the
 * call runs once and every one of them records that one outcome.
 */
import { ID_MAX_LENGTH, ToolpactError, isToolpactError, type ToolRef } from "@toolpact/contract";
import type { Principal } from "../api.js";
import { checkCallerId } from "../caller-ids.js";
import type { Logger } from "../logger.js";
import type { SealedPayloads } from "../sealed/sealed-payloads.js";
import type { Store, TaskRecord } from "../store/store.js";
import type { RuntimeTasks, StartTaskOptions, TaskCancelAnswer, TaskInputAnswer, TaskView } from "./task-api.js";
import { checkRefShape, keptCallOf, principalOf, toolLabel, type KeptCall } from "./kept-call.js";
import { newTaskId } from "./task-ids.js";
import { TaskLedger, settledTask, undrivenTask } from "./task-ledger.js";
import { TaskRunner, logTaskFailure, type TaskCalls } from "./task-runner.js";
import { viewOfTask } from "./task-view.js";
import { isTerminalTask } from "./task-states.js";

/** What the service works with. */
export interface TaskServiceParts {
  readonly calls: TaskCalls;
  readonly store: Store;
  readonly sealed: SealedPayloads;
  readonly clock: () => number;
  readonly logger: Logger;
  /** Names this instance as the driver of the tasks it runs. */
  readonly instanceId: string;
  /** How long a driver's claim holds without renewal, ms (renewed every third of it while the call runs). */
  readonly claimMs: number;
  /** The longest a task may be kept, ms (at most as long as idempotency keys: the call's key must outlive the task). */
  readonly maxTtlMs: number;
}

/** A task's time to live when the client names none, ms. */
export const DEFAULT_TASK_TTL_MS = 60 * 60 * 1000;
/** How many tasks one caller may have open (working or waiting) for one user at once. */
export const MAX_OPEN_TASKS = 64;
/** When a caller at its open-task bound is told to try again, ms. */
const TASK_RETRY_AFTER_MS = 5000;
/** The shortest time to live a task may have, ms. */
export const MIN_TASK_TTL_MS = 10_000;
/** How often a task that waits for a decision is looked at by the sweep when nothing announced the decision, ms. */
const WAITING_CHECK_MS = 2000;
/** How many open tasks one sweep looks at. */
const SWEEP_LIMIT = 50;

/** The task service. */
export class TaskService implements RuntimeTasks {
  readonly #parts: TaskServiceParts;
  readonly #ledger: TaskLedger;
  readonly #runner: TaskRunner;
  #closed = false;

  constructor(parts: TaskServiceParts) {
    this.#parts = parts;
    this.#ledger = new TaskLedger(parts);
    this.#runner = new TaskRunner({ ...parts, ledger: this.#ledger, prepareConfirmed: (record, kept) => this.#prepare(record, kept) });
  }

  async start(principal: Principal, ref: ToolRef, input: unknown, options: StartTaskOptions = {}): Promise<TaskView> {
    const { store, sealed, clock, instanceId, claimMs } = this.#parts;
    checkRefShape(ref);
    const ttlMs = this.#ttlOf(options.ttlMs);
    if ((await store.countOpenTasks(principal.tenantId, principal.callerPluginId, principal.actor.userId)) >= MAX_OPEN_TASKS) {
      throw new ToolpactError(
        "RATE_LIMITED",
        `this caller already has ${MAX_OPEN_TASKS} open tasks for this user: wait for some to end, cancel them with tasks/cancel, or retry later`,
        { retryAfterMs: TASK_RETRY_AFTER_MS },
      );
    }
    const now = clock();
    const taskId = newTaskId();
    const kept: KeptCall = keptCallOf(principal, ref, input, options.requiresConfirmation !== false);
    const record: TaskRecord = {
      tenantId: principal.tenantId,
      taskId,
      callerPluginId: principal.callerPluginId,
      actorUserId: principal.actor.userId,
      ...(principal.keyId === undefined ? {} : { keyId: principal.keyId }),
      tool: toolLabel(ref),
      status: "working",
      statusMessage: "the call is being prepared",
      begun: false,
      createdAt: now,
      updatedAt: now,
      expiresAt: now + ttlMs,
      driver: instanceId,
      driverUntil: now + claimMs,
      revision: 0,
      sealedCall: sealed.sealTaskCall(principal.tenantId, taskId, kept),
    };
    await store.insertTask(record);
    return this.#view(await this.#prepare(record, kept));
  }

  async get(principal: Principal, taskId: string): Promise<TaskView> {
    const record = await this.#visible(principal, taskId);
    return this.#view(await this.#advance(record));
  }

  async answer(principal: Principal, taskId: string, answer: TaskInputAnswer): Promise<TaskView> {
    const record = await this.#visible(principal, taskId);
    if (answer.action !== "accept" && answer.action !== "decline" && answer.action !== "cancel") {
      throw new ToolpactError(
        "INPUT_INVALID",
        `the answer's action must be "accept", "decline" or "cancel"; got ${JSON.stringify(answer.action)?.slice(0, 40)}`,
      );
    }
    const asked = (current: TaskRecord) => current.status === "input_required" && current.confirmationId === answer.requestId && !current.begun;
    if (!asked(record)) return this.#view(record);
    if (answer.action === "accept") {
      const next = await this.#ledger.update(record, (current) =>
        asked(current) ? { ...current, status: "working", statusMessage: "waiting for the user's decision on the confirmation page" } : undefined,
      );
      return this.#view(await this.#advance(next));
    }
    const why = answer.action === "decline" ? "the user declined to open the confirmation page" : "the user dismissed the confirmation request";
    const failed = await this.#ledger.finish(record, asked, {
      ok: false,
      code: "CONFIRMATION_DENIED",
      message: `${why}: the confirmation request for ${record.tool} was withdrawn; nothing ran`,
      data: {},
    });
    if (failed.status === "failed") await this.#withdraw(failed);
    return this.#view(failed);
  }

  async cancel(principal: Principal, taskId: string): Promise<TaskCancelAnswer> {
    const record = await this.#visible(principal, taskId);
    const now = this.#parts.clock();
    const next = await this.#ledger.update(record, (current) => {
      if (isTerminalTask(current.status) || current.cancelRequestedAt !== undefined) return undefined;
      if (!current.begun) {
        return settledTask(current, "cancelled", `cancelled by the client before ${current.tool} ran; nothing ran`);
      }
      return {
        ...current,
        cancelRequestedAt: now,
        statusMessage: `cancel asked after ${current.tool} began: an effect already begun is not undone; the task ends with the call's outcome`,
      };
    });
    if (next.status === "cancelled" && record.status !== "cancelled") await this.#withdraw(next);
    const view = this.#view(next);
    if (next.status === "cancelled") {
      return { task: view, effectBegun: false, message: next.statusMessage ?? "the task was cancelled; nothing ran" };
    }
    if (next.begun) {
      const message = isTerminalTask(next.status)
        ? `the task had already ended (${next.status}); nothing was undone`
        : `${next.tool} had already begun: an effect already begun is not undone; the task ends with the call's outcome`;
      return { task: view, effectBegun: true, message };
    }
    return { task: view, effectBegun: false, message: `the task had already ended (${next.status}); nothing ran` };
  }

  /**
   * One pass over open tasks whose driver went away (a restart, a crash) or that wait for a decision:
   * each is moved on as far as it can go now. Returns how many were looked at.
   */
  async sweep(): Promise<number> {
    if (this.#closed) return 0;
    const open = await this.#parts.store.listOpenTasks(this.#parts.clock(), SWEEP_LIMIT);
    for (const record of open) {
      if (this.#closed) break;
      await this.#advance(record).catch((error: unknown) => logTaskFailure(this.#parts.logger, record, error));
    }
    return open.length;
  }

  /** A confirmation request was decided (here or on another instance): its task, if any, moves on. */
  async confirmationDecided(tenantId: string, requestId: string): Promise<void> {
    if (this.#closed) return;
    const record = await this.#parts.store.findTaskByConfirmation(tenantId, requestId);
    if (record !== undefined) await this.#advance(record);
  }

  /** Stops moving tasks on and waits for the calls running here to record their outcome. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#runner.close();
  }

  // -- moving a task on ----------------------------------------------------------------------------------

  /** Moves a task on as far as it can go now; the latest record. */
  async #advance(record: TaskRecord): Promise<TaskRecord> {
    if (isTerminalTask(record.status) || this.#closed) return record;
    const now = this.#parts.clock();
    if (!record.begun && now >= record.expiresAt) return this.#expire(record);
    if (!record.begun && record.confirmationId !== undefined) return this.#checkDecision(record);
    if (this.#runner.has(record.taskId) || (record.driverUntil > now && record.driver !== undefined)) return record;
    // Its driver went away before the call was prepared, or while it ran: take it over.
    const claimed = await this.#ledger.claim(record, (current) => current.driverUntil <= now || current.driver === undefined);
    if (claimed === undefined) return (await this.#parts.store.getTask(record.tenantId, record.taskId)) ?? record;
    const kept = this.#keptOf(claimed);
    return claimed.begun ? this.#runner.launch(claimed, kept) : this.#prepare(claimed, kept);
  }

  /** Before the call is handed to execute: does it need the user's approval? The task as it then stands. */
  async #prepare(record: TaskRecord, kept: KeptCall): Promise<TaskRecord> {
    if (!kept.confirm) return this.#begin(record, kept, undefined);
    const principal = principalOf(record, kept);
    let confirmation: Awaited<ReturnType<TaskCalls["preview"]>>["confirmation"];
    try {
      ({ confirmation } = await this.#parts.calls.preview(principal, kept.ref, kept.input));
    } catch (error) {
      return this.#failOrRelease(record, error);
    }
    if (!confirmation.required) return this.#begin(record, kept, undefined);
    if (confirmation.mode === "token") {
      return this.#ledger.finish(record, (current) => !current.begun, {
        ok: false,
        code: "PERMISSION_DENIED",
        message:
          `${record.tool} would be confirmed by the calling plugin itself (token mode), and a task never confirms for the user; ` +
          'nothing ran: set mode: "platform" on the policy rule for this tool, or call it with a key not in trustedConfirmationUis',
        data: {},
      });
    }
    const next = await this.#ledger.update(record, (current) => {
      if (current.status !== "working" || current.begun) return undefined;
      return {
        ...undrivenTask(current, this.#parts.clock() + WAITING_CHECK_MS),
        status: "input_required",
        statusMessage: `${record.tool} needs the user's approval: open the confirmation page; nothing runs until the user approves there`,
        confirmationId: confirmation.requestId,
        confirmUrl: confirmation.confirmUrl,
      };
    });
    // A decision that came between the preview and this write would have found no task: look once more.
    return next.status === "input_required" ? this.#checkDecision(next) : next;
  }

  /** A task waiting for the user: approved -> the call begins; denied, expired or withdrawn -> it ends, nothing ran. */
  async #checkDecision(record: TaskRecord): Promise<TaskRecord> {
    const kept = this.#keptOf(record);
    const requestId = record.confirmationId!;
    const status = await this.#parts.calls.getConfirmation(principalOf(record, kept), requestId);
    const waiting = (current: TaskRecord) => !isTerminalTask(current.status) && !current.begun;
    switch (status.status) {
      case "pending": {
        const now = this.#parts.clock();
        if (record.driverUntil > now) return record;
        // Looked at now: the sweep comes back to it after the others.
        return this.#ledger.update(record, (current) => (waiting(current) ? { ...current, driverUntil: now + WAITING_CHECK_MS } : undefined));
      }
      case "approved":
        return this.#begin(record, kept, status.token);
      case "denied":
        return this.#ledger.finish(record, waiting, {
          ok: false,
          code: "CONFIRMATION_DENIED",
          message: `the user denied ${record.tool} on the confirmation page; nothing ran`,
          data: {},
        });
      case "expired":
        return this.#ledger.finish(record, waiting, {
          ok: false,
          code: "CONFIRMATION_EXPIRED",
          message: `the confirmation request for ${record.tool} expired before the call could run; nothing ran`,
          data: {},
        });
      case "cancelled":
        return this.#ledger.update(record, (current) =>
          waiting(current) ? settledTask(current, "cancelled", `the confirmation request for ${record.tool} was withdrawn; nothing ran`) : undefined,
        );
    }
  }

  /** Marks the call begun (this instance drives it) and runs it in the background. */
  async #begin(record: TaskRecord, kept: KeptCall, token: string | undefined): Promise<TaskRecord> {
    const begun = await this.#ledger.claim(
      record,
      (current) => !current.begun,
      (current) => ({ ...current, status: "working", begun: true, statusMessage: `${record.tool} is running` }),
    );
    if (begun === undefined) return (await this.#parts.store.getTask(record.tenantId, record.taskId)) ?? record;
    return this.#runner.launch(begun, kept, token);
  }

  /** A task past its time to live whose call never began: it ends, nothing ran, and its request is withdrawn. */
  async #expire(record: TaskRecord): Promise<TaskRecord> {
    const next = await this.#ledger.update(record, (current) =>
      isTerminalTask(current.status) || current.begun
        ? undefined
        : settledTask(current, "cancelled", `the task expired before ${current.tool} ran; nothing ran`),
    );
    if (next.status === "cancelled") await this.#withdraw(next);
    return next;
  }

  /** Before the call began: a refusal ends the task; shutting down or a store outage leaves it for the next driver. */
  async #failOrRelease(record: TaskRecord, error: unknown): Promise<TaskRecord> {
    if (!isToolpactError(error) || error.code === "SHUTTING_DOWN" || error.code === "STORE_UNAVAILABLE") {
      await this.#ledger.release(record);
      throw error;
    }
    return this.#ledger.finish(record, (current) => !current.begun && !isTerminalTask(current.status), {
      ok: false,
      code: error.code,
      message: error.message,
      data: error.data,
    });
  }

  /** Withdraws the pending confirmation request of a task that ended before its call began. */
  async #withdraw(record: TaskRecord): Promise<void> {
    if (record.confirmationId === undefined) return;
    await this.#parts.calls.cancelConfirmation(principalOf(record, this.#keptOf(record)), record.confirmationId).catch((error: unknown) => {
      this.#parts.logger.warn({ event: "task_withdraw_failed", tenantId: record.tenantId, errorClass: (error as Error)?.constructor?.name ?? "Error" });
    });
  }

  // -- reading ------------------------------------------------------------------------------------------

  /** The task, only for the tenant, caller and actor that started it; anyone else gets the same refusal as for no task. */
  async #visible(principal: Principal, taskId: string): Promise<TaskRecord> {
    checkCallerId("taskId", taskId);
    const record = await this.#parts.store.getTask(principal.tenantId, taskId);
    if (record === undefined || record.callerPluginId !== principal.callerPluginId || record.actorUserId !== principal.actor.userId) {
      throw new ToolpactError(
        "PERMISSION_DENIED",
        `no task "${taskId.slice(0, ID_MAX_LENGTH)}" is visible to this caller and user: a task is visible only to the caller and user that started it, ` +
          "until its time to live ends",
      );
    }
    return record;
  }

  #keptOf(record: TaskRecord): KeptCall {
    return this.#parts.sealed.openTaskCall(record.tenantId, record.taskId, record.sealedCall) as KeptCall;
  }

  #view(record: TaskRecord): TaskView {
    return viewOfTask(record, this.#parts.sealed);
  }

  #ttlOf(ttlMs: number | undefined): number {
    if (ttlMs === undefined) return Math.min(DEFAULT_TASK_TTL_MS, this.#parts.maxTtlMs);
    if (!Number.isFinite(ttlMs)) throw new ToolpactError("INPUT_INVALID", `a task's ttlMs must be a number of milliseconds; got ${String(ttlMs)}`);
    return Math.min(Math.max(Math.floor(ttlMs), MIN_TASK_TTL_MS), this.#parts.maxTtlMs);
  }
}
