import type { Logger } from "../logger.js";
import { errorClassOf } from "../activity/error-class.js";
import type { OperationRecord, Store } from "../store/store.js";

/** Expired leases settled per pass step. */
const RECOVERY_BATCH = 100;
/** Expired leases this instance settles at once (a re-invocation runs up to its tool's timeout). */
const RECOVERY_CONCURRENCY = 8;

/** What the scheduler needs: the store, the clock, and how one expired operation is settled. */
export interface RecoverySchedulerOptions {
  readonly store: Store;
  readonly clock: () => number;
  readonly logger: Logger;
  /** Settles one operation whose lease expired; false when it left it alone. */
  readonly recover: (expired: OperationRecord) => Promise<boolean>;
}

/**
 * Finds operations whose lease expired (a crashed or stuck instance) and settles them, at most
 * RECOVERY_CONCURRENCY at once on this instance, so one slow re-invocation does not hold up the rest.
 */
export class RecoveryScheduler {
  readonly #options: RecoverySchedulerOptions;
  /** Operations this instance is settling now: a pass skips them, so each is taken up once here. */
  readonly #recovering = new Set<string>();
  /** Free recovery slots, and who waits for one. */
  #slots = RECOVERY_CONCURRENCY;
  readonly #waiting: (() => void)[] = [];

  constructor(options: RecoverySchedulerOptions) {
    this.#options = options;
  }

  /**
   * One pass: lists expired leases and settles them. Passes may overlap (the periodic job does not wait
   * for a pass stuck on a slow provider); an operation already being settled here is skipped, and the
   * store's lease takeover lets only one instance act on each. Resolves once this pass's work is done.
   */
  async pass(): Promise<number> {
    const { store, clock } = this.#options;
    let settled = 0;
    for (;;) {
      const expired = await store.listExpiredLeases(clock(), RECOVERY_BATCH);
      const fresh = expired.filter((operation) => !this.#recovering.has(operation.operationId));
      for (const operation of fresh) this.#recovering.add(operation.operationId);
      const outcomes = await Promise.all(fresh.map((operation) => this.#settleOne(operation)));
      const progressed = outcomes.filter(Boolean).length;
      settled += progressed;
      if (expired.length < RECOVERY_BATCH || progressed === 0) return settled;
    }
  }

  /** Settles one expired lease in a recovery slot; false when it was left alone or failed (logged). */
  async #settleOne(operation: OperationRecord): Promise<boolean> {
    try {
      while (this.#slots === 0) await new Promise<void>((resolve) => this.#waiting.push(resolve));
      this.#slots--;
      try {
        return await this.#options.recover(operation);
      } finally {
        this.#slots++;
        this.#waiting.shift()?.();
      }
    } catch (error) {
      this.#options.logger.error({ event: "recovery_failed", operationId: operation.operationId, errorClass: errorClassOf(error) });
      return false;
    } finally {
      this.#recovering.delete(operation.operationId);
    }
  }
}
