/**
 * The runtime's metrics, made once per runtime from a registered meter provider. Names and units follow the
 * OpenTelemetry conventions (durations in seconds, counts as `{call}`); attributes carry the tool, its effect,
 * the phase and outcome or refusal code, never input, never a token, never a user.
 */
import type { Counter, Histogram, Meter } from "@opentelemetry/api";

/** The instruments a runtime records into. */
export interface Instruments {
  /** Every preview and execute, by tool, effect, phase and outcome. */
  readonly calls: Counter;
  /** Every refused or failed call, by tool, effect, phase and error code. */
  readonly refusals: Counter;
  /** How long a call took in the runtime, by tool, effect, phase and outcome. */
  readonly callDuration: Histogram;
  /** How long a platform confirmation request waited for its decision, by decision. */
  readonly confirmationWait: Histogram;
  /** Recovery passes over an expired operation, by outcome. */
  readonly recoveryRuns: Counter;
  /** How long one commit to the store took, by operation. */
  readonly storeCommitDuration: Histogram;
  /** Store commits that failed, by operation. */
  readonly storeFailures: Counter;
}

/** Seconds buckets from a sub-millisecond read to a long commit. */
const CALL_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds buckets from a quick approval to the longest confirmation TTL. */
const WAIT_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600];

/** Makes the runtime's instruments on `meter`. */
export function createInstruments(meter: Meter): Instruments {
  return {
    calls: meter.createCounter("toolpact.calls", { description: "Tool calls (previews and executes) by outcome", unit: "{call}" }),
    refusals: meter.createCounter("toolpact.refusals", { description: "Tool calls refused or failed, by error code", unit: "{call}" }),
    callDuration: meter.createHistogram("toolpact.call.duration", {
      description: "Time a tool call spent in the runtime",
      unit: "s",
      advice: { explicitBucketBoundaries: CALL_BUCKETS },
    }),
    confirmationWait: meter.createHistogram("toolpact.confirmation.wait.duration", {
      description: "Time a platform confirmation request waited for its decision",
      unit: "s",
      advice: { explicitBucketBoundaries: WAIT_BUCKETS },
    }),
    recoveryRuns: meter.createCounter("toolpact.recovery.runs", { description: "Recovery passes over an expired operation", unit: "{operation}" }),
    storeCommitDuration: meter.createHistogram("toolpact.store.commit.duration", {
      description: "Time one commit to the store took",
      unit: "s",
      advice: { explicitBucketBoundaries: CALL_BUCKETS },
    }),
    storeFailures: meter.createCounter("toolpact.store.failures", { description: "Store commits that failed", unit: "{commit}" }),
  };
}
