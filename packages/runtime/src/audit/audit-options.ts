/** When the runtime makes activity checkpoints: its options, their defaults and their checks, in one home. */

/** Defaults of the checkpoint job: one run a minute, over events at least ten seconds old. */
export const AUDIT_DEFAULTS = Object.freeze({ checkpointIntervalSeconds: 60, settleSeconds: 10 });

/** How often the runtime checkpoints the activity log, and how old an event must be to be linked. */
export interface AuditOptions {
  /** How often this instance links settled events and signs a checkpoint, ms (default 60 s; 0 turns the job off). */
  readonly checkpointIntervalMs?: number;
  /**
   * How old an event must be before it is linked, ms (default 10 s): longer than any transaction that
   * writes activity may take to commit, so an event committed late is never passed over.
   */
  readonly settleMs?: number;
  /**
   * Run checkpoints on a worker thread with its own connection to the store (default true; a store in
   * memory always runs them on the calling thread). False keeps them on the thread that serves calls.
   */
  readonly worker?: boolean;
}

/** `AuditOptions` with defaults filled in and checked. */
export function resolveAuditOptions(options: AuditOptions = {}): {
  readonly checkpointIntervalMs: number;
  readonly settleMs: number;
  readonly worker: boolean;
} {
  const checkpointIntervalMs = options.checkpointIntervalMs ?? AUDIT_DEFAULTS.checkpointIntervalSeconds * 1000;
  const settleMs = options.settleMs ?? AUDIT_DEFAULTS.settleSeconds * 1000;
  if (!(checkpointIntervalMs >= 0)) throw new TypeError(`audit.checkpointIntervalMs must be 0 (off) or more; got ${checkpointIntervalMs}`);
  if (!(settleMs >= 0)) throw new TypeError(`audit.settleMs must be 0 or more; got ${settleMs}`);
  return { checkpointIntervalMs, settleMs, worker: options.worker !== false };
}
