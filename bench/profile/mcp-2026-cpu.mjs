// Server CPU per call and sequential p50 of MCP `tools/call` at 2026-07-28: `toolpact serve`'s `/mcp` beside
// the MCP SDK v2's own stateless server (bench/overhead/servers/mcp-v2.mjs), driven by the bench load
// client's v2 SDK client pinned to 2026-07-28, in interleaved rounds. CPU is each server process's
// scheduler run time (/proc/<pid>/task/*/schedstat, all threads), so it holds up on a busy machine better
// than latency does. Linux only; uses the built dist.
// Usage: node bench/profile/mcp-2026-cpu.mjs [--rounds 12] [--calls 300] [--in-flight 0]
import { readFile, readdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startJsonServer, startWorker, stopAllChildren, stopChild } from "../lib/processes.mjs";
import { median, quantile } from "../lib/stats.mjs";
import { startToolpactHosts } from "../lib/toolpact-host.mjs";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "12" }, calls: { type: "string", default: "300" }, "in-flight": { type: "string", default: "0" } },
});
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);
const IN_FLIGHT = Number(values["in-flight"]);

/** The process and its descendants (`toolpact serve` re-runs itself in a child). */
async function processTree(pid) {
  const pids = [pid];
  for (const task of await readdir(`/proc/${pid}/task`)) {
    const children = (await readFile(`/proc/${pid}/task/${task}/children`, "utf8").catch(() => "")).trim();
    for (const child of children.split(/\s+/).filter(Boolean)) pids.push(...(await processTree(Number(child))));
  }
  return pids;
}

/** Nanoseconds the processes' threads have run on a CPU. */
async function runTimeNs(pids) {
  let sum = 0;
  for (const pid of pids) {
    for (const task of await readdir(`/proc/${pid}/task`).catch(() => [])) {
      const stat = await readFile(`/proc/${pid}/task/${task}/schedstat`, "utf8").catch(() => "0");
      sum += Number(stat.split(" ")[0]);
    }
  }
  return sum;
}

const hosts = await startToolpactHosts();
const sdk = await startJsonServer(fileURLToPath(new URL("../overhead/servers/mcp-v2.mjs", import.meta.url)));
const driver = startWorker(fileURLToPath(new URL("../lib/load-driver.mjs", import.meta.url)));
try {
  const systems = [
    {
      name: "toolpact-mcp-2026",
      spec: { kind: "toolpact-mcp-2026", urls: hosts.urls, pluginKey: hosts.pluginKey, actorToken: hosts.actorToken },
      pids: await processTree(hosts.children[0].pid),
    },
    { name: "mcp-v2-2026", spec: { kind: "mcp-2026", url: sdk.url }, pids: await processTree(sdk.child.pid) },
  ];
  for (const system of systems) {
    await driver.request("setup", { spec: { name: system.name, ...system.spec } });
    await driver.request("warmup", { name: system.name, count: 1_000, maxMs: 60_000 });
    await driver.request("throughput", { name: system.name, seconds: 1.5, inFlight: 32 });
    system.p50s = [];
    system.cpu = [];
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const system of round % 2 === 0 ? systems : [...systems].reverse()) {
      const before = await runTimeNs(system.pids);
      let calls = CALLS;
      if (IN_FLIGHT > 0) {
        const result = await driver.request("throughput", { name: system.name, seconds: 60, inFlight: IN_FLIGHT, maxCalls: CALLS });
        calls = result.calls;
      } else {
        const latencies = await driver.request("sequential", { name: system.name, count: CALLS, maxMs: 60_000 });
        system.p50s.push(
          quantile(
            [...latencies].sort((a, b) => a - b),
            0.5,
          ),
        );
        calls = latencies.length;
      }
      system.cpu.push(((await runTimeNs(system.pids)) - before) / 1_000 / calls);
    }
  }
  const [toolpact, v2] = systems;
  const paired = (key) => median(toolpact[key].map((value, i) => value / v2[key][i]));
  const us = (list) => median(list).toFixed(0);
  console.log(
    `server CPU µs per call (median of ${ROUNDS} rounds): toolpact ${us(toolpact.cpu)}, v2 SDK ${us(v2.cpu)}, paired ratio ${paired("cpu").toFixed(3)}x` +
      (IN_FLIGHT > 0
        ? ` (at ${IN_FLIGHT} in flight)`
        : ` | sequential p50 ms: toolpact ${median(toolpact.p50s).toFixed(3)}, v2 SDK ${median(v2.p50s).toFixed(3)}, paired ratio ${paired("p50s").toFixed(3)}x`),
  );
  await driver.request("close");
} finally {
  await driver.stop();
  await stopChild(sdk.child);
  await hosts.stop();
  await stopAllChildren();
}
