// The bench's settings per mode (smoke, default, full): bench/run.mjs runs with them, and scripts that
// run part of a group alone (bench/profile/mcp-2026-ratio.mjs) take the same.
/**
 * Per mode; `durable` overrides some for that group (its sequential rounds are not the point and PostgreSQL
 * calls are slower). Many short throughput rounds rather than a few long ones: on a shared machine a burst
 * of someone else's work then spoils a few rounds of every system instead of one system's median.
 */
export const SETTINGS = {
  smoke: {
    rounds: 1,
    sequentialCalls: 30,
    sequentialMaxMs: 1_000,
    throughputRounds: 1,
    throughputSeconds: 0.3,
    warmupCalls: 20,
    warmupSeconds: 0.2,
    microSeconds: 0.2,
    codegenRuns: 1,
    durable: {},
  },
  default: {
    rounds: 5,
    sequentialCalls: 200,
    sequentialMaxMs: 2_000,
    throughputRounds: 7,
    throughputSeconds: 0.4,
    warmupCalls: 300,
    warmupSeconds: 1.5,
    microSeconds: 0.6,
    codegenRuns: 1,
    durable: { rounds: 3, sequentialCalls: 100, sequentialMaxMs: 1_500, warmupCalls: 200 },
  },
  full: {
    rounds: 10,
    sequentialCalls: 500,
    sequentialMaxMs: 5_000,
    throughputRounds: 15,
    throughputSeconds: 1,
    warmupCalls: 1_000,
    warmupSeconds: 4,
    microSeconds: 2,
    codegenRuns: 7,
    durable: { rounds: 5, sequentialCalls: 300, sequentialMaxMs: 5_000, warmupCalls: 500 },
  },
};
