// What an activity checkpoint costs per event beside what the call that wrote the event cost, in CPU:
// `runtime.execute` of the read tool at 32 in flight (checkpoint job idle), then one
// `runtime.checkpointActivity()` over everything those calls wrote, again and again (`--batches` times, as
// the job does every 250 ms), run on the calls' thread (`audit.worker: false`) and on the runtime's
// checkpoint worker thread (the default), on SQLite and PostgreSQL. The first checkpoint of a round, which
// starts the worker (a module load and a connection) and runs cold code, is left out: the figures are the
// steady state, the median over the round's other checkpoints, then over rounds. CPU time, not wall time,
// so it holds on a busy machine where throughput does not: the whole process's (process.cpuUsage: every
// thread) and the calls' thread's alone (Linux /proc, 10 ms ticks). The PostgreSQL server's own CPU is
// another process's: see the durable group for throughput.
//
//   node bench/audit/cost.mjs [--calls 2000] [--batches 8] [--rounds 3]
import { parseArgs } from "node:util";
import { callsThreadCpuUs as mainThreadCpuUs, processCpuUs } from "../lib/cpu.mjs";
import { createFreshDatabase, postgresVersion } from "../lib/postgres.mjs";
import { READ_REF } from "../lib/tenant.mjs";
import { inputOf } from "../lib/work.mjs";
import { createWorld } from "../lib/world.mjs";

const { values } = parseArgs({
  options: { calls: { type: "string", default: "2000" }, batches: { type: "string", default: "8" }, rounds: { type: "string", default: "3" } },
});
const CALLS = Number(values.calls);
const BATCHES = Number(values.batches);
const ROUNDS = Number(values.rounds);
const IN_FLIGHT = 32;

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];

async function round(database, auditWorker) {
  // The job scheduled far beyond the run (so calls run alone), over events of any age when asked.
  const world = await createWorld({ database, checkpointEveryMs: 3_600_000, auditWorker });
  try {
    const principal = await world.runtime.authenticate({ pluginKey: world.pluginKey, actorToken: world.actorToken });
    const batches = [];
    for (let batch = 0; batch < BATCHES; batch++) {
      let next = 0;
      const worker = async () => {
        while (next < CALLS) {
          const i = next++;
          await world.runtime.execute(principal, READ_REF, inputOf(i));
        }
      };
      const callsFrom = processCpuUs();
      await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
      const callCpu = processCpuUs() - callsFrom;
      const [processFrom, mainFrom] = [processCpuUs(), mainThreadCpuUs()];
      const run = await world.runtime.checkpointActivity();
      const [processCpu, mainCpu] = [processCpuUs() - processFrom, mainThreadCpuUs() - mainFrom];
      const linked = Math.max(1, run.linked);
      batches.push({ perCall: callCpu / CALLS, perEvent: processCpu / linked, mainPerEvent: mainCpu / linked, linked: run.linked });
    }
    const steady = batches.slice(1);
    return {
      perCall: median(steady.map((batch) => batch.perCall)),
      perEvent: median(steady.map((batch) => batch.perEvent)),
      mainPerEvent: median(steady.map((batch) => batch.mainPerEvent)),
      first: batches[0].perEvent,
      linked: batches.reduce((sum, batch) => sum + batch.linked, 0),
    };
  } finally {
    await world.close();
  }
}

const targets = [
  ["SQLite", async () => ({ database: undefined, drop: async () => {} })],
  [
    "PostgreSQL",
    async () => {
      if ((await postgresVersion()).error !== undefined) return undefined;
      const fresh = await createFreshDatabase();
      return { database: fresh.url, drop: fresh.drop };
    },
  ],
];
const rows = [];
for (const [label, open] of targets) {
  for (const auditWorker of [false, true]) {
    const results = [];
    for (let r = 0; r < ROUNDS; r++) {
      const target = await open();
      if (target === undefined) break;
      try {
        results.push(await round(target.database, auditWorker));
      } finally {
        await target.drop();
      }
    }
    if (results.length === 0) continue;
    const perCall = median(results.map((result) => result.perCall));
    const perEvent = median(results.map((result) => result.perEvent));
    const mainPerEvent = median(results.map((result) => result.mainPerEvent));
    const first = median(results.map((result) => result.first));
    const where = auditWorker ? "worker thread" : "calls' thread";
    const pct = (value) => `${((value / perCall) * 100).toFixed(1)} %`;
    rows.push(
      `| ${label} | ${where} | ${perCall.toFixed(1)} µs | ${perEvent.toFixed(1)} µs (${pct(perEvent)}) | ${mainPerEvent.toFixed(1)} µs (${pct(mainPerEvent)}) | ${first.toFixed(1)} µs | ${results[0].linked} |`,
    );
  }
}
console.log(
  `${BATCHES} times ${CALLS} calls at ${IN_FLIGHT} in flight, each time followed by a checkpoint over them; the first checkpoint set aside, median of the rest, then of ${ROUNDS} rounds\n`,
);
console.log(
  "| ledger | checkpoint on | CPU per call | checkpoint CPU per event, process (÷ call) | on the calls' thread (÷ call) | first checkpoint, per event | events linked (a round) |",
);
console.log("| --- | --- | ---: | ---: | ---: | ---: | ---: |");
for (const row of rows) console.log(row);
