/**
 * The runtime's periodic jobs and their timers: a recovery pass soon after start-up then one every
 * interval, pruning what is past its retention, and signing activity checkpoints. Each timer is unref'd
 * (none keeps the process alive); the runtime clears them on close.
 */
import type { RuntimeContext } from "./options.js";
import { CONSUMED_TOKEN_GRACE_MS, type PruneResult } from "./store/store.js";
import type { Telemetry } from "./telemetry/telemetry.js";
import { checkpointActivity, type CheckpointRun } from "./audit/chain-checkpointer.js";
import { auditKeySeed } from "./audit/checkpoint-key.js";
import { CheckpointThread } from "./audit/checkpoint-thread.js";

/** How soon after creation the first recovery pass runs, ms. */
const STARTUP_RECOVERY_DELAY_MS = 1000;

/** The jobs the timers run (the runtime's own methods, so a run by hand and a run by timer are one path). */
export interface RuntimeJobs {
  /** Settles expired leases and confirmation requests, and moves on tasks nobody drives. */
  readonly maintain: () => Promise<void>;
  readonly prune: () => Promise<PruneResult>;
  readonly checkpointActivity: () => Promise<CheckpointRun>;
}

/** Starts the timers the options turn on (an interval of 0 turns a job off); returns them for `close` to clear. */
export function startJobTimers(context: RuntimeContext, jobs: RuntimeJobs): NodeJS.Timeout[] {
  const { logger, recoveryIntervalMs, pruneIntervalMs } = context;
  const timers: NodeJS.Timeout[] = [];
  const failed = (event: string) => (error: unknown) => logger.error({ event, errorClass: (error as Error)?.constructor?.name ?? "Error" });
  if (recoveryIntervalMs > 0) {
    const maintain = () => void jobs.maintain().catch(failed("recovery_failed"));
    timers.push(setTimeout(maintain, Math.min(STARTUP_RECOVERY_DELAY_MS, recoveryIntervalMs)));
    timers.push(setInterval(maintain, recoveryIntervalMs));
  }
  if (pruneIntervalMs > 0) timers.push(setInterval(() => void jobs.prune().catch(failed("prune_failed")), pruneIntervalMs));
  const { checkpointIntervalMs } = context.audit;
  if (checkpointIntervalMs > 0) {
    timers.push(setInterval(() => void jobs.checkpointActivity().catch(failed("activity_checkpoint_failed")), checkpointIntervalMs));
  }
  for (const timer of timers) timer.unref();
  return timers;
}

/** Deletes what is past its retention, each kind by its own retention option. */
export function pruneExpired(context: RuntimeContext): Promise<PruneResult> {
  const now = context.clock();
  return context.store.prune({
    now,
    consumedTokensExpiredBefore: now - CONSUMED_TOKEN_GRACE_MS,
    activityBefore: now - context.activityRetentionMs,
    confirmationsExpiredBefore: now - context.confirmationRetentionMs,
    outboxBefore: now - context.outboxRetentionMs,
    operationsBefore: now - context.operationRetentionMs,
  });
}

/**
 * Signs activity checkpoints one at a time: a run while one is in flight gets that one's answer. Runs go
 * to a worker thread with its own connection when the store has a location (a file or a server), so the
 * calls' thread does none of the work; on a store in memory, or after the worker failed, they run here.
 */
export class ActivityCheckpoints {
  readonly #context: RuntimeContext;
  #running: Promise<CheckpointRun> | undefined;
  #thread: CheckpointThread | undefined | null = null;

  constructor(context: RuntimeContext) {
    this.#context = context;
  }

  run(): Promise<CheckpointRun> {
    if (this.#running !== undefined) return this.#running;
    const context = this.#context;
    const options = { now: context.clock(), settleMs: context.audit.settleMs };
    if (this.#thread === null) {
      this.#thread = context.audit.worker
        ? CheckpointThread.start(context.store.location, auditKeySeed(context.auditKey), context.store.activityChain)
        : undefined;
    }
    const thread = this.#thread?.alive === true ? this.#thread : undefined;
    const run =
      thread === undefined
        ? checkpointActivity(context.store.activityChain, context.auditKey, options).then((made) => ({ ...made, onWorker: false }))
        : thread.run(options).then((made) => ({ ...made, onWorker: true }));
    this.#running = run.finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** Waits for a run in flight, then ends the worker thread (if one started). */
  async stop(): Promise<void> {
    await this.#running?.catch(() => undefined);
    await this.#thread?.stop();
  }
}

/** A recovery pass, counted by how it ended. */
export function countedRecovery(telemetry: Telemetry, pass: Promise<boolean>): Promise<boolean> {
  return pass.then(
    (settled) => {
      telemetry.recovered(settled ? "recovered" : "skipped");
      return settled;
    },
    (error: unknown) => {
      telemetry.recovered("failed");
      throw error;
    },
  );
}
