// Whether the activity checkpoint job holds up the calls' thread: `runtime.execute` of the read tool at 32
// in flight on a SQLite ledger for a fixed time, with the job off, on its worker thread (the default) and
// on the calls' thread (`audit.worker: false`), checkpoints every 250 ms, in interleaved rounds. Prints each
// round's throughput, call latency percentiles and the event loop's delay (its p99 and worst): a job that
// makes the calls' thread wait (a lock, a synchronous batch of hashing) shows there, not only in throughput;
// and the calls' thread's CPU per call, which holds on a busy machine where throughput does not.
//
//   node bench/audit/stalls.mjs [--seconds 3] [--rounds 3] [--modes off,worker,inline]
//
// To see whether the calls' thread sleeps in SQLite's busy handler (a write lock held by another
// connection), trace its sleeps while a round runs: `strace -f -e trace=clock_nanosleep -p <pid>`; the
// calls' thread is the one whose id is the process's.
import { readFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { READ_REF } from "../lib/tenant.mjs";
import { inputOf } from "../lib/work.mjs";
import { createWorld } from "../lib/world.mjs";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "3" },
    rounds: { type: "string", default: "3" },
    modes: { type: "string", default: "off,worker,inline" },
  },
});
const SECONDS = Number(values.seconds);
const IN_FLIGHT = 32;
const CHECKPOINT_EVERY_MS = 250;

/** The calls' thread's user + system CPU so far, µs (Linux /proc, 10 ms ticks; the thread's id is the process's). */
function callsThreadCpuUs() {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** Calls at 32 in flight for `seconds` (after half a second of warm-up); what they and the event loop did. */
async function measure(world, seconds) {
  const principal = await world.runtime.authenticate({ pluginKey: world.pluginKey, actorToken: world.actorToken });
  const latencies = [];
  let next = 0;
  let stopped = false;
  const worker = async () => {
    while (!stopped) {
      const started = performance.now();
      await world.runtime.execute(principal, READ_REF, inputOf(next++));
      latencies.push(performance.now() - started);
    }
  };
  const runFor = async (ms) => {
    stopped = false;
    const timer = setTimeout(() => (stopped = true), ms);
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    clearTimeout(timer);
  };
  await runFor(500);
  latencies.length = 0;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const started = performance.now();
  const cpuFrom = callsThreadCpuUs();
  await runFor(seconds * 1000);
  const cpu = callsThreadCpuUs() - cpuFrom;
  const elapsed = (performance.now() - started) / 1000;
  loop.disable();
  latencies.sort((a, b) => a - b);
  const at = (p) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))];
  return {
    callsPerSecond: Math.round(latencies.length / elapsed),
    cpuPerCall: cpu / latencies.length,
    p50: at(0.5),
    p99: at(0.99),
    worst: latencies.at(-1),
    loopP99: loop.percentile(99) / 1e6,
    loopWorst: loop.max / 1e6,
  };
}

const ms = (value) => value.toFixed(2).padStart(7);
console.log("round  job      calls/s  calls' thread CPU µs/call   p50 ms   p99 ms  worst ms  loop p99 ms  loop worst ms");
for (let round = 0; round < Number(values.rounds); round++) {
  for (const mode of values.modes.split(",")) {
    const world = await createWorld(mode === "off" ? {} : { checkpointEveryMs: CHECKPOINT_EVERY_MS, auditWorker: mode === "worker" });
    try {
      const m = await measure(world, SECONDS);
      console.log(
        `${String(round).padStart(5)}  ${mode.padEnd(7)} ${String(m.callsPerSecond).padStart(8)}  ${m.cpuPerCall.toFixed(1).padStart(24)}  ${ms(m.p50)}  ${ms(m.p99)}  ${ms(m.worst)}      ${ms(m.loopP99)}        ${ms(m.loopWorst)}`,
      );
    } finally {
      await world.close();
    }
  }
}
