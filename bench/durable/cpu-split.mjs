// The experiment behind the PostgreSQL target (docs/benchmarks.md): where the CPU of `toolpact serve` at 32
// calls in flight goes, on the SQLite ledger and on PostgreSQL, in interleaved rounds. Per call, from /proc:
// the serving process, the load client and the PostgreSQL server; and how busy the serving process and the
// whole machine were over the same seconds. A server that is not busy while the machine has idle time is
// waiting: on PostgreSQL, for the commit its calls share.
//   node bench/durable/cpu-split.mjs [--seconds 3] [--rounds 3] [--no-commit-wait]
//   --no-commit-wait: the PostgreSQL database runs with synchronous_commit off (commits answer before their WAL
//   is flushed, so a crash can lose them): how much of the gap is the wait for the flush. An experiment only.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { postgresCpuByPid, postgresCpuSince, servingPid, statCpuUs } from "../lib/cpu.mjs";
import { createFreshDatabase, queryRows } from "../lib/postgres.mjs";
import { startWorker, stopAllChildren } from "../lib/processes.mjs";
import { formatRatio, markdownTable, median } from "../lib/stats.mjs";
import { startToolpactHosts } from "../lib/toolpact-host.mjs";

const { values } = parseArgs({
  options: { seconds: { type: "string", default: "3" }, rounds: { type: "string", default: "3" }, "no-commit-wait": { type: "boolean" } },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);

/** The machine's idle and busy time so far, µs (all cores, from /proc/stat's first line). */
function machineCpu() {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = (fields[3] + fields[4]) * 10_000;
  const all = fields.reduce((sum, value) => sum + value, 0) * 10_000;
  return { idle, busy: all - idle };
}

const pidCpu = (pid) => statCpuUs(`/proc/${pid}/stat`) ?? 0;

const load = startWorker(fileURLToPath(new URL("../lib/load-driver.mjs", import.meta.url)));
const database = await createFreshDatabase();
// The experiment's control, never a configuration to run: commits answer before their WAL reaches the disk.
if (values["no-commit-wait"]) await queryRows(database.url, `ALTER DATABASE "${database.name}" SET synchronous_commit = off`);
const hosts = { SQLite: await startToolpactHosts({}), PostgreSQL: await startToolpactHosts({ database: database.url }) };
const rows = { SQLite: [], PostgreSQL: [] };
try {
  for (const [store, host] of Object.entries(hosts)) {
    await load.request("setup", { spec: { name: store, kind: "toolpact-read", urls: host.urls, pluginKey: host.pluginKey, actorToken: host.actorToken } });
    await load.request("warmup", { name: store, count: 500 });
    await load.request("throughput", { name: store, seconds: 1, inFlight: 32 });
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const [store, host] of Object.entries(hosts)) {
      const server = servingPid(host.children[0]);
      const before = { machine: machineCpu(), server: pidCpu(server), client: pidCpu(load.child.pid), postgres: postgresCpuByPid() };
      const result = await load.request("throughput", { name: store, seconds: SECONDS, inFlight: 32 });
      const machine = machineCpu();
      const calls = result.calls;
      const per = (us) => us / calls;
      rows[store].push({
        rate: calls / result.seconds,
        serverBusy: (pidCpu(server) - before.server) / (result.seconds * 1e6),
        server: per(pidCpu(server) - before.server),
        client: per(pidCpu(load.child.pid) - before.client),
        postgres: per(postgresCpuSince(before.postgres)),
        busy: per(machine.busy - before.machine.busy),
        idle: (machine.idle - before.machine.idle) / (machine.idle - before.machine.idle + machine.busy - before.machine.busy),
      });
    }
  }
} finally {
  await load.request("close").catch(() => {});
  await Promise.all(Object.values(hosts).map((host) => host.stop()));
  await stopAllChildren();
  await database.drop?.();
}
const med = (store, key) => median(rows[store].map((row) => row[key]));
const us = (value) => value.toFixed(0);
console.log(`# CPU per call of \`toolpact serve\` at 32 in flight: ${ROUNDS} interleaved rounds of ${SECONDS} s, medians\n`);
console.log(
  markdownTable(
    ["ledger", "calls/s", "serving process", "load client", "PostgreSQL server", "whole machine", "serving process busy", "machine idle"],
    Object.keys(rows).map((store) => [
      store,
      med(store, "rate").toFixed(0),
      us(med(store, "server")),
      us(med(store, "client")),
      us(med(store, "postgres")),
      us(med(store, "busy")),
      `${(med(store, "serverBusy") * 100).toFixed(0)} %`,
      `${(med(store, "idle") * 100).toFixed(0)} %`,
    ]),
  ),
);
const paired = (key) => formatRatio(median(rows.PostgreSQL.map((row, round) => row[key] / rows.SQLite[round][key])));
console.log(
  `\nCPU per call, µs, medians over the rounds. PostgreSQL ÷ SQLite, paired by round: calls/s ${paired("rate")}, whole machine's CPU per call ${paired("busy")}.`,
);
