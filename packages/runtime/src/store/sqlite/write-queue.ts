import type Database from "better-sqlite3";
import { storeClosed } from "../refusals.js";
import { asStoreError } from "./errors.js";

interface Job {
  readonly work: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The one way into the SQLite connection. Writes go through one queue: with group commit, everything
 * asked for in one event-loop turn becomes one transaction. Jobs are closures that read and write only
 * through this connection, so a batch that fails can be rolled back and run again, job by job.
 */
export class WriteQueue {
  readonly #groupCommit: boolean;
  readonly #batch: Database.Transaction<(jobs: readonly Job[], outcomes: unknown[]) => void>;
  readonly #isolatedBatch: Database.Transaction<(jobs: readonly Job[], outcomes: { ok: boolean; value: unknown }[]) => void>;
  readonly #single: (work: () => unknown) => unknown;
  #pending: Job[] = [];
  #scheduled = false;
  #closed = false;

  constructor(db: Database.Database, groupCommit: boolean) {
    this.#groupCommit = groupCommit;
    const savepoint = db.transaction((work: () => unknown) => work());
    this.#single = (work) => savepoint.immediate(work);
    // The common case: every job succeeds, and the batch is one plain transaction.
    this.#batch = db.transaction((jobs: readonly Job[], outcomes: unknown[]) => {
      for (const job of jobs) outcomes.push(job.work());
    });
    // After a failure: the same jobs again, each in its own savepoint.
    this.#isolatedBatch = db.transaction((jobs: readonly Job[], outcomes: { ok: boolean; value: unknown }[]) => {
      for (const job of jobs) {
        try {
          outcomes.push({ ok: true, value: savepoint(job.work) });
        } catch (error) {
          // A failure that ended the whole transaction (disk full, I/O) fails the batch; others stay with their job.
          if (!db.inTransaction) throw error;
          outcomes.push({ ok: false, value: error });
        }
      }
    });
  }

  /** True once `close` ran: every job is refused. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Runs `work` in a write transaction (shared with the other writes of this event-loop turn). */
  write<T>(work: () => T): Promise<T> {
    if (this.#closed) return Promise.reject(storeClosed());
    if (!this.#groupCommit) {
      try {
        return Promise.resolve(this.#single(work) as T);
      } catch (error) {
        return Promise.reject(asStoreError(error));
      }
    }
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  /** Runs `work` (a read) now. */
  read<T>(work: () => T): Promise<T> {
    if (this.#closed) return Promise.reject(storeClosed());
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(asStoreError(error));
    }
  }

  /** Commits every pending write now. */
  readonly flush = (): void => {
    this.#scheduled = false;
    const jobs = this.#pending;
    if (jobs.length === 0) return;
    this.#pending = [];
    const values: unknown[] = [];
    let firstError: unknown;
    try {
      this.#batch.immediate(jobs, values);
      for (let index = 0; index < jobs.length; index++) jobs[index]!.resolve(values[index]);
      return;
    } catch (error) {
      firstError = error;
    }
    // Something failed and the whole batch rolled back: with one job, that job failed; else redo each alone.
    if (jobs.length === 1) {
      jobs[0]!.reject(asStoreError(firstError));
      return;
    }
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      this.#isolatedBatch.immediate(jobs, outcomes);
    } catch (error) {
      const failure = asStoreError(error);
      for (const job of jobs) job.reject(failure);
      return;
    }
    for (let index = 0; index < jobs.length; index++) {
      const outcome = outcomes[index]!;
      if (outcome.ok) jobs[index]!.resolve(outcome.value);
      else jobs[index]!.reject(asStoreError(outcome.value));
    }
  };

  /** Commits what is pending, then refuses every further job. */
  close(): void {
    this.flush();
    this.#closed = true;
  }
}
