// Whether the activity checkpoint job holds up the calls' thread: `runtime.execute` of the read tool at 32
// (or `--in-flight`) in flight on a SQLite ledger (or PostgreSQL, `--store postgres`) for a fixed time, with the job off, on its worker thread (the default) and
// on the calls' thread (`audit.worker: false`), checkpoints every 250 ms, in interleaved rounds. Prints each
// round's throughput, call latency percentiles and the event loop's delay (its p99 and worst): a job that
// makes the calls' thread wait (a lock, a synchronous batch of hashing) shows there, not only in throughput;
// and the CPU per call, which holds on a busy machine where throughput does not: the calls' thread's, the
// whole process's (every thread: the worker's hashing too) and, on PostgreSQL, the server's (all its
// processes on this machine, read from /proc: the worker's reads and the checkpoint writes land there).
//
//   node bench/audit/stalls.mjs [--seconds 3] [--rounds 3] [--modes off,worker,inline] [--store sqlite|postgres] [--in-flight 32]
//
// To see whether the calls' thread sleeps in SQLite's busy handler (a write lock held by another
// connection), trace its sleeps while a round runs: `strace -f -e trace=clock_nanosleep -p <pid>`; the
// calls' thread is the one whose id is the process's.
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { callsThreadCpuUs, postgresCpuByPid, postgresCpuSince, processCpuUs } from "../lib/cpu.mjs";
import { createFreshDatabase } from "../lib/postgres.mjs";
import { READ_REF } from "../lib/tenant.mjs";
import { inputOf } from "../lib/work.mjs";
import { createWorld } from "../lib/world.mjs";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "3" },
    rounds: { type: "string", default: "3" },
    modes: { type: "string", default: "off,worker,inline" },
    store: { type: "string", default: "sqlite" },
    "in-flight": { type: "string", default: "32" },
  },
});
const SECONDS = Number(values.seconds);
const IN_FLIGHT = Number(values["in-flight"]);
const CHECKPOINT_EVERY_MS = 250;

if (!["sqlite", "postgres"].includes(values.store)) throw new Error(`--store is sqlite or postgres, not ${values.store}`);

/** Calls at IN_FLIGHT (default 32) for `seconds` (after half a second of warm-up); what they and the event loop did. */
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
  const processFrom = processCpuUs();
  const postgresFrom = values.store === "postgres" ? postgresCpuByPid() : undefined;
  await runFor(seconds * 1000);
  const cpu = callsThreadCpuUs() - cpuFrom;
  const processCpu = processCpuUs() - processFrom;
  const postgresCpu = postgresFrom === undefined ? undefined : postgresCpuSince(postgresFrom);
  const elapsed = (performance.now() - started) / 1000;
  loop.disable();
  latencies.sort((a, b) => a - b);
  const at = (p) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))];
  return {
    callsPerSecond: Math.round(latencies.length / elapsed),
    cpuPerCall: cpu / latencies.length,
    processCpuPerCall: processCpu / latencies.length,
    postgresCpuPerCall: postgresCpu === undefined ? undefined : postgresCpu / latencies.length,
    p50: at(0.5),
    p99: at(0.99),
    worst: latencies.at(-1),
    loopP99: loop.percentile(99) / 1e6,
    loopWorst: loop.max / 1e6,
  };
}

const ms = (value) => value.toFixed(2).padStart(7);
const us = (value, width) => (value === undefined ? "-" : value.toFixed(1)).padStart(width);
console.log(
  `${values.store}, ${IN_FLIGHT} in flight: CPU µs per call of the calls' thread, the process (every thread) and the PostgreSQL server\n` +
    "round  job      calls/s  thread  process  server   p50 ms   p99 ms  worst ms  loop p99 ms  loop worst ms",
);
for (let round = 0; round < Number(values.rounds); round++) {
  for (const mode of values.modes.split(",")) {
    const database = values.store === "postgres" ? await createFreshDatabase() : undefined;
    const world = await createWorld({
      database: database?.url,
      ...(mode === "off" ? {} : { checkpointEveryMs: CHECKPOINT_EVERY_MS, auditWorker: mode === "worker" }),
    });
    try {
      const m = await measure(world, SECONDS);
      console.log(
        `${String(round).padStart(5)}  ${mode.padEnd(7)} ${String(m.callsPerSecond).padStart(8)}  ${us(m.cpuPerCall, 6)}  ${us(m.processCpuPerCall, 7)}  ${us(m.postgresCpuPerCall, 6)}  ${ms(m.p50)}  ${ms(m.p99)}  ${ms(m.worst)}      ${ms(m.loopP99)}        ${ms(m.loopWorst)}`,
      );
    } finally {
      await world.close();
      await database?.drop();
    }
  }
}
