// Group "telemetry": the read-tool execute over HTTP (`toolpact serve`, SQLite ledger) with no OpenTelemetry
// SDK, with the SDK started but sampling nothing, and with the SDK exporting every span and metric over
// OTLP/HTTP (protobuf, the SDK's default, BatchSpanProcessor) to a local receiver, every trace or one in ten: side by side, in
// interleaved rounds, ratios paired against the run without an SDK.
import { fileURLToPath } from "node:url";
import { servingPid, statCpuUs } from "../lib/cpu.mjs";
import { checkLedger, countLedger } from "../lib/ledger.mjs";
import { startJsonServer, startWorker, stopChild } from "../lib/processes.mjs";
import { measureInterleaved, pairedRatios } from "../lib/rounds.mjs";
import { formatMs, formatRate, formatRatio, markdownTable } from "../lib/stats.mjs";
import { startToolpactHosts } from "../lib/toolpact-host.mjs";

/** No SDK: OTEL_* cleared, whatever the bench was started with. */
const NO_SDK = { OTEL_TRACES_EXPORTER: "", OTEL_METRICS_EXPORTER: "" };

/** The SDK exporting everything: a queue large enough that no span is dropped at full load. */
export const exporting = (endpoint) => ({
  OTEL_TRACES_EXPORTER: "otlp",
  OTEL_METRICS_EXPORTER: "otlp",
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_SERVICE_NAME: "toolpact-bench",
  OTEL_BSP_MAX_QUEUE_SIZE: "200000",
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "2048",
  OTEL_BSP_SCHEDULE_DELAY: "500",
  OTEL_METRIC_EXPORT_INTERVAL: "5000",
});

/** The SDK started, but nothing sampled and no metrics: the runtime's one check at creation finds nothing to record. */
const SAMPLING_NOTHING = { OTEL_TRACES_EXPORTER: "otlp", OTEL_TRACES_SAMPLER: "always_off", OTEL_METRICS_EXPORTER: "none" };

const SYSTEMS = [
  { name: "read-no-sdk", label: "read execute, no OpenTelemetry SDK", env: () => NO_SDK },
  { name: "read-sdk-off", label: "read execute, SDK started, sampler `always_off`, no metrics", env: () => SAMPLING_NOTHING },
  { name: "read-sdk-exporting", label: "read execute, SDK exporting spans and metrics (OTLP/HTTP protobuf, batched)", env: exporting },
  {
    name: "read-sdk-sampled",
    label: "read execute, SDK exporting 1 trace in 10 (`parentbased_traceidratio` 0.1) and metrics",
    env: (endpoint) => ({ ...exporting(endpoint), OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.1" }),
  },
];

/** Runs the group; answers its markdown and target checks. */
export async function runTelemetry(settings, log) {
  const hosts = new Map();
  let receiver;
  let driver;
  try {
    log(`starting the receiver, ${SYSTEMS.length} toolpact serve processes and the load worker`);
    receiver = await startJsonServer(fileURLToPath(new URL("./receiver.mjs", import.meta.url)));
    for (const system of SYSTEMS) hosts.set(system.name, await startToolpactHosts({ env: system.env(receiver.url) }));
    driver = startWorker(fileURLToPath(new URL("../lib/load-driver.mjs", import.meta.url)));
    const systems = [];
    for (const system of SYSTEMS) {
      const host = hosts.get(system.name);
      await driver.request("setup", {
        spec: { name: system.name, kind: "toolpact-read", urls: host.urls, pluginKey: host.pluginKey, actorToken: host.actorToken },
      });
      systems.push({ ...system, driver });
    }
    const pids = new Map(SYSTEMS.map((system) => [system.name, servingPid(hosts.get(system.name).children[0])]));
    const cpuBefore = new Map(SYSTEMS.map((system) => [system.name, cpuMs(pids.get(system.name))]));
    const results = await measureInterleaved(systems, settings, (line) => log(line));
    /** @type {Map<string, number | undefined>} server CPU ms per call, over the warm-up and every round */
    const cpuPerCall = new Map();
    for (const system of SYSTEMS) {
      const before = cpuBefore.get(system.name);
      const after = cpuMs(pids.get(system.name));
      const calls = results.get(system.name).calls;
      cpuPerCall.set(system.name, before === undefined || after === undefined ? undefined : (after - before) / calls);
      checkLedger(await countLedger({ sqliteFile: hosts.get(system.name).sqliteFile }), calls, `${system.name} (SQLite)`);
    }
    // Stopping the exporting hosts flushes what their SDKs still hold.
    for (const name of ["read-sdk-exporting", "read-sdk-sampled"]) {
      await hosts.get(name).stop();
      hosts.delete(name);
    }
    const received = await (await fetch(`${receiver.url}/stats`)).json();
    return report(results, settings, received, cpuPerCall);
  } finally {
    await driver
      ?.request("close")
      .catch(() => {})
      .then(() => driver.stop());
    await Promise.all([...hosts.values()].map((host) => host.stop()));
    if (receiver !== undefined) await stopChild(receiver.child);
  }
}

/** User + system CPU time of a process so far, ms (Linux /proc, 100 ticks a second); undefined elsewhere. */
function cpuMs(pid) {
  const used = pid === undefined ? undefined : statCpuUs(`/proc/${pid}/stat`);
  return used === undefined ? undefined : used / 1000;
}

function report(results, settings, received, cpuPerCall) {
  const base = results.get("read-no-sdk");
  const baseCpu = cpuPerCall.get("read-no-sdk");
  const cpu = (/** @type {string} */ name) => {
    const value = cpuPerCall.get(name);
    return value === undefined || baseCpu === undefined ? "n/a" : `${value.toFixed(3)} (${formatRatio(value / baseCpu)})`;
  };
  const rows = SYSTEMS.map((system) => {
    const { latency, rate } = results.get(system.name);
    const ratio = pairedRatios(results.get(system.name), base);
    return [
      system.label,
      formatMs(latency.p50),
      formatMs(latency.p99),
      formatRatio(ratio.p50),
      formatRate(rate),
      formatRatio(ratio.throughput),
      cpu(system.name),
    ];
  });
  const table = markdownTable(
    [
      "system",
      "p50 ms",
      "p99 ms",
      "p50 ÷ no SDK",
      `calls/s at ${settings.inFlight} in flight (range over rounds)`,
      "no-SDK calls/s ÷ calls/s",
      "server CPU ms per call (÷ no SDK)",
    ],
    rows,
    ["l", "r", "r", "r", "r", "r", "r"],
  );
  const exporting = pairedRatios(results.get("read-sdk-exporting"), base);
  const off = pairedRatios(results.get("read-sdk-off"), base);
  const traces = received["/v1/traces"] ?? { exports: 0, bytes: 0 };
  const metrics = received["/v1/metrics"] ?? { exports: 0, bytes: 0 };
  const ratio = (/** @type {number} */ value) => `${value.toFixed(3)}x`;
  const cpuRatio = (/** @type {string} */ name) => {
    const value = cpuPerCall.get(name);
    return value === undefined || baseCpu === undefined ? "n/a" : ratio(value / baseCpu);
  };
  const targets = [
    {
      target: "read execute with an SDK exporting (OTLP/HTTP to a local receiver): p50 at most 1.05x none",
      measured: ratio(exporting.p50),
      met: exporting.p50 <= 1.05,
    },
    {
      target: `read execute with an SDK exporting: throughput at ${settings.inFlight} in flight within 1.05x of none`,
      measured: ratio(exporting.throughput),
      met: exporting.throughput <= 1.05,
    },
    { target: "read execute with an SDK that records nothing: p50 within 1.02x of none (no measurable cost)", measured: ratio(off.p50), met: off.p50 <= 1.02 },
    {
      target: "read execute with an SDK that records nothing: server CPU per call within 1.02x of none",
      measured: cpuRatio("read-sdk-off"),
      met: cpuPerCall.get("read-sdk-off") !== undefined && baseCpu !== undefined ? (cpuPerCall.get("read-sdk-off") ?? 0) / baseCpu <= 1.02 : undefined,
    },
    {
      target: "read execute with an SDK exporting every trace: server CPU per call at most 1.05x none",
      measured: cpuRatio("read-sdk-exporting"),
      met:
        cpuPerCall.get("read-sdk-exporting") !== undefined && baseCpu !== undefined ? (cpuPerCall.get("read-sdk-exporting") ?? 0) / baseCpu <= 1.05 : undefined,
    },
  ];
  const markdown = [
    table,
    "",
    `Each row is its own \`toolpact serve\` (SQLite ledger) on loopback, driven by one HTTP load worker with createHttpTransport; ` +
      `${settings.rounds} interleaved sequential rounds, ${settings.throughputRounds} interleaved throughput rounds of ${settings.throughputSeconds} s, ` +
      "ratios paired per round against the host without an SDK. The exporting hosts run @opentelemetry/sdk-node 0.223 as `toolpact serve` starts it from OTEL_* " +
      "(no instrumentations; BatchSpanProcessor with a queue large enough to drop nothing; metrics every 5 s) and send to one receiver in its own process on the same machine, " +
      `which got ${traces.exports.toLocaleString("en-US")} trace exports (${(traces.bytes / 1e6).toFixed(1)} MB) and ${metrics.exports} metric exports. ` +
      "One read execute makes 15 spans (the call, 9 steps, record-read and its 5 effect steps). " +
      "Server CPU per call is the serving process's user + system time (/proc) over the warm-up and all rounds, divided by the calls it served: " +
      "the cost in work, less sensitive than latency to what else the machine runs.",
  ].join("\n");
  return { markdown, targets };
}
