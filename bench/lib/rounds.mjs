// Interleaved measurement of several systems: every round visits each system once (A B C, then B C A, ...),
// so drift in machine load touches them all alike. Sequential latency first, then throughput.
import { latencySummary, median, quantile, rateSummary } from "./stats.mjs";

const rotate = (list, by) => list.map((_, i) => list[(i + by) % list.length]);

/**
 * Measures `systems` ({ name, driver } with `driver.request`) with `settings`: { warmupCalls,
 * warmupSeconds, rounds, sequentialCalls, sequentialMaxMs, throughputRounds, throughputSeconds, inFlight }.
 * Answers per system: latency { p50, p99, n } in ms pooled over the rounds, rate { median, min, max, rounds }
 * in calls/s, the p50 and rate of each round (for paired ratios), and the calls that succeeded.
 * @param {(line: string) => void} [log]
 */
export async function measureInterleaved(systems, settings, log = () => {}) {
  const { inFlight } = settings;
  for (const system of systems) {
    log(`warming up ${system.name}`);
    await system.driver.request("warmup", { name: system.name, count: settings.warmupCalls, maxMs: 10_000 });
    // At full concurrency too: it opens the connection pools and gets the concurrent path optimized
    // (throughput climbs for the first thousand or so calls of a fresh process).
    await system.driver.request("throughput", { name: system.name, seconds: settings.warmupSeconds, inFlight });
  }
  const samples = new Map(systems.map((system) => [system.name, []]));
  const roundP50s = new Map(systems.map((system) => [system.name, []]));
  for (let round = 0; round < settings.rounds; round++) {
    log(`sequential round ${round + 1}/${settings.rounds}`);
    for (const system of rotate(systems, round)) {
      const latencies = await system.driver.request("sequential", {
        name: system.name,
        count: settings.sequentialCalls,
        maxMs: settings.sequentialMaxMs,
      });
      samples.get(system.name).push(...latencies);
      roundP50s.get(system.name)[round] = quantile(
        [...latencies].sort((a, b) => a - b),
        0.5,
      );
    }
  }
  const rounds = new Map(systems.map((system) => [system.name, []]));
  for (let round = 0; round < settings.throughputRounds; round++) {
    log(`throughput round ${round + 1}/${settings.throughputRounds} (${inFlight} in flight, ${settings.throughputSeconds} s each)`);
    for (const system of rotate(systems, round)) {
      rounds.get(system.name)[round] = await system.driver.request("throughput", { name: system.name, seconds: settings.throughputSeconds, inFlight });
    }
  }
  const results = new Map();
  for (const system of systems) {
    results.set(system.name, {
      latency: latencySummary(samples.get(system.name)),
      rate: rateSummary(rounds.get(system.name)),
      roundP50s: roundP50s.get(system.name),
      roundRates: rounds.get(system.name).map((round) => round.calls / round.seconds),
      calls: await system.driver.request("completed", { name: system.name }),
    });
  }
  return results;
}

/**
 * Paired cost ratios of `result` against `base`, round by round (both were measured in the same round,
 * seconds apart), then the median: latency p50 ÷ base p50, and base calls/s ÷ calls/s.
 */
export function pairedRatios(result, base) {
  return {
    p50: median(result.roundP50s.map((p50, round) => p50 / base.roundP50s[round])),
    throughput: median(result.roundRates.map((rate, round) => base.roundRates[round] / rate)),
  };
}
