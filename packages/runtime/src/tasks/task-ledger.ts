/**
 * The writes of a task's row: each a compare-and-set on its revision, decided again on the fresh row
 * when another write came first; claims that name the instance driving the task; and the terminal
 * write that seals the call's outcome. The task service decides what to write; this writes it.
 */
import { ToolpactError } from "@toolpact/contract";
import type { SealedPayloads } from "../sealed/sealed-payloads.js";
import type { Store, TaskRecord } from "../store/store.js";
import type { TaskOutcome } from "./task-api.js";
import { isTerminalTask } from "./task-states.js";

/** How many times a write is tried again after another write to the same task came first. */
const CAS_ATTEMPTS = 8;

/** What the ledger writes with. */
export interface TaskLedgerParts {
  readonly store: Store;
  readonly sealed: SealedPayloads;
  readonly clock: () => number;
  /** Names this instance as the driver of the tasks it claims. */
  readonly instanceId: string;
  /** How long a claim holds without renewal, ms. */
  readonly claimMs: number;
}

/** A terminal version of a record: with its status and message, and no driver. */
export function settledTask(record: TaskRecord, status: "completed" | "failed" | "cancelled", statusMessage: string): TaskRecord {
  const { driver: _driver, ...rest } = record;
  return { ...rest, status, statusMessage, driverUntil: 0 };
}

/** A record nobody drives, to be looked at again at `driverUntil` (0: at once). */
export function undrivenTask(record: TaskRecord, driverUntil: number): TaskRecord {
  const { driver: _driver, ...rest } = record;
  return { ...rest, driverUntil };
}

/** The task rows of one runtime. */
export class TaskLedger {
  readonly #parts: TaskLedgerParts;

  constructor(parts: TaskLedgerParts) {
    this.#parts = parts;
  }

  /** This instance's name as a driver. */
  get instanceId(): string {
    return this.#parts.instanceId;
  }

  /**
   * Writes `decide(current)` over the row while it is still `current`, reading again after a write that
   * came first. `undefined` from `decide` leaves the row as it is. The row as it then stands.
   */
  async update(record: TaskRecord, decide: (current: TaskRecord) => TaskRecord | undefined): Promise<TaskRecord> {
    const { store, clock } = this.#parts;
    let current = record;
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const wanted = decide(current);
      if (wanted === undefined) return current;
      const next: TaskRecord = { ...wanted, updatedAt: clock(), revision: current.revision + 1 };
      if (await store.replaceTask(next, current.revision)) return next;
      const reread = await store.getTask(record.tenantId, record.taskId);
      if (reread === undefined) return current;
      current = reread;
    }
    throw new ToolpactError("CONCURRENT_CHANGE", `task ${record.taskId} changed ${CAS_ATTEMPTS} times while it was being updated: ask for it again`);
  }

  /**
   * Takes (or renews) this instance's claim while the task is open and `may` holds, applying `change`
   * too; undefined when it does not hold (another instance drives it, or it ended).
   */
  async claim(
    record: TaskRecord,
    may: (current: TaskRecord) => boolean,
    change: (current: TaskRecord) => TaskRecord = (current) => current,
  ): Promise<TaskRecord | undefined> {
    const now = this.#parts.clock();
    let allowed = true;
    const next = await this.update(record, (current) => {
      allowed = !isTerminalTask(current.status) && may(current);
      if (!allowed) return undefined;
      return { ...change(current), driver: this.#parts.instanceId, driverUntil: now + this.#parts.claimMs };
    });
    return allowed ? next : undefined;
  }

  /** Lets go of a task this instance drives, so the next `get` or sweep (here or elsewhere) takes it over. */
  async release(record: TaskRecord): Promise<void> {
    await this.update(record, (current) =>
      current.driver !== this.#parts.instanceId || isTerminalTask(current.status) ? undefined : undrivenTask(current, 0),
    ).catch(() => {});
  }

  /** Records how the call ended, sealed, while `may` holds for the row. */
  finish(record: TaskRecord, may: (current: TaskRecord) => boolean, outcome: TaskOutcome): Promise<TaskRecord> {
    const sealed = this.#parts.sealed.sealTaskOutcome(record.tenantId, record.taskId, outcome);
    return this.update(record, (current) => {
      if (isTerminalTask(current.status) || !may(current)) return undefined;
      const settled = outcome.ok
        ? settledTask(current, "completed", `${current.tool} completed`)
        : settledTask(current, "failed", `${current.tool} failed: ${outcome.code}`);
      const operationId = outcome.ok ? outcome.operationId : typeof outcome.data.operationId === "string" ? outcome.data.operationId : undefined;
      return {
        ...settled,
        sealedOutcome: sealed,
        ...(operationId === undefined ? {} : { operationId }),
        ...(outcome.ok ? {} : { errorCode: outcome.code }),
      };
    });
  }
}
