/**
 * Running a begun task's call in the background, once: under the idempotency key `task:<taskId>` (so a
 * second instance that takes the task over replays the recorded outcome instead of running it again),
 * renewing this instance's claim while it runs, and recording the outcome on the task.
 */
import { isToolpactError } from "@toolpact/contract";
import type { Principal, Runtime } from "../api.js";
import type { Logger } from "../logger.js";
import type { TaskRecord } from "../store/store.js";
import type { TaskOutcome } from "./task-api.js";
import { principalOf, type KeptCall } from "./kept-call.js";
import { settledTask, type TaskLedger } from "./task-ledger.js";
import { isTerminalTask } from "./task-states.js";

/** The runtime calls a task makes, as the caller and user that started it. */
export type TaskCalls = Pick<Runtime, "preview" | "execute" | "getConfirmation" | "cancelConfirmation">;

/** What the runner works with. */
export interface TaskRunnerParts {
  readonly calls: TaskCalls;
  readonly ledger: TaskLedger;
  readonly logger: Logger;
  /** How long a claim holds without renewal, ms (renewed every third of it). */
  readonly claimMs: number;
  /** Sends a task back the confirmed way (a gate demanded a confirmation the listing did not; nothing ran). */
  readonly prepareConfirmed: (record: TaskRecord, kept: KeptCall) => Promise<unknown>;
}

/** Logs that a task could not be moved on (it stays as it was; the next `get` or sweep tries again). */
export function logTaskFailure(logger: Logger, record: TaskRecord, error: unknown): void {
  logger.error({
    event: "task_move_failed",
    tenantId: record.tenantId,
    errorClass: (error as Error)?.constructor?.name ?? "Error",
    ...(isToolpactError(error) ? { errorCode: error.code } : {}),
  });
}

/** The calls of tasks running in this process. */
export class TaskRunner {
  readonly #parts: TaskRunnerParts;
  readonly #running = new Map<string, Promise<void>>();

  constructor(parts: TaskRunnerParts) {
    this.#parts = parts;
  }

  /** True while this task's call runs here. */
  has(taskId: string): boolean {
    return this.#running.has(taskId);
  }

  /** Runs the begun call in the background under this instance's claim; answers the record as it is now. */
  launch(record: TaskRecord, kept: KeptCall, token?: string): TaskRecord {
    if (!this.#running.has(record.taskId)) {
      const run = this.#run(record, kept, token)
        .catch((error: unknown) => logTaskFailure(this.#parts.logger, record, error))
        .finally(() => this.#running.delete(record.taskId));
      this.#running.set(record.taskId, run);
    }
    return record;
  }

  /** Waits for the calls running here to record their outcome. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#running.values()]);
  }

  async #run(record: TaskRecord, kept: KeptCall, approvedToken: string | undefined): Promise<void> {
    const { calls, ledger, claimMs } = this.#parts;
    const principal = principalOf(record, kept);
    let latest = record;
    const renew = setInterval(
      () => {
        void ledger
          .claim(latest, (current) => current.driver === ledger.instanceId)
          .then(
            (renewed) => {
              if (renewed !== undefined) latest = renewed;
            },
            () => {},
          );
      },
      Math.max(100, Math.floor(claimMs / 3)),
    );
    renew.unref();
    try {
      const token = approvedToken ?? (await this.#tokenOf(record, principal));
      const options = { idempotencyKey: `task:${record.taskId}`, ...(token === undefined ? {} : { confirmationToken: token }) };
      let outcome: TaskOutcome;
      try {
        const executed = await calls.execute(principal, kept.ref, kept.input, options);
        outcome = { ok: true, operationId: executed.operationId, result: executed.result ?? null };
      } catch (error) {
        clearInterval(renew);
        if (isToolpactError(error) && error.code === "CONFIRMATION_REQUIRED" && record.confirmationId === undefined) {
          await this.#confirmedWay(latest, kept);
          return;
        }
        if (!isToolpactError(error) || error.code === "OPERATION_IN_PROGRESS" || error.code === "SHUTTING_DOWN") {
          // Another instance runs it, or this one stops: leave it working for whoever comes next.
          await ledger.release(latest);
          return;
        }
        outcome = { ok: false, code: error.code, message: error.message, data: error.data };
      }
      clearInterval(renew);
      await ledger.finish(latest, (current) => current.begun, outcome);
    } finally {
      clearInterval(renew);
    }
  }

  /** A gate asked for a confirmation the listing did not: nothing ran, so the task goes the confirmed way. */
  async #confirmedWay(record: TaskRecord, kept: KeptCall): Promise<void> {
    const { ledger } = this.#parts;
    const back = await ledger.update(record, (current) => {
      if (current.driver !== ledger.instanceId || isTerminalTask(current.status)) return undefined;
      return current.cancelRequestedAt === undefined
        ? { ...current, begun: false }
        : settledTask(current, "cancelled", `cancelled by the client before ${current.tool} ran; nothing ran`);
    });
    if (back.status === "working" && !back.begun) await this.#parts.prepareConfirmed(back, { ...kept, confirm: true });
  }

  /** The token of the approved request a begun call carries after a restart (undefined: none, or no longer approved). */
  async #tokenOf(record: TaskRecord, principal: Principal): Promise<string | undefined> {
    if (record.confirmationId === undefined) return undefined;
    const status = await this.#parts.calls.getConfirmation(principal, record.confirmationId);
    return status.status === "approved" ? status.token : undefined;
  }
}
