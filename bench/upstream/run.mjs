// Group "upstream": a tool of a real MCP server no one here wrote (server-everything's `echo`, over stdio)
// called directly with the MCP SDK v2 client, beside the same call through toolpact (a plugin naming the
// server as its upstream; `runtime.execute` runs the whole pipeline and records the call durably), both in
// one worker process, in interleaved rounds with ratios paired per round.
import { fileURLToPath } from "node:url";
import { checkLedger, countLedger } from "../lib/ledger.mjs";
import { startWorker } from "../lib/processes.mjs";
import { measureInterleaved, pairedRatios } from "../lib/rounds.mjs";
import { formatMs, formatRate, formatRatio, markdownTable } from "../lib/stats.mjs";

const SYSTEMS = [
  { name: "upstream-direct", label: "server-everything `echo` over stdio, called directly with the MCP SDK v2 `Client`", kind: "direct" },
  {
    name: "upstream-toolpact",
    label: "the same call through toolpact: `runtime.execute` of the upstream plugin's tool (whole pipeline, SQLite ledger)",
    kind: "toolpact",
  },
];

/** The target of DESIGN.md: a call through toolpact to an upstream MCP server at most 1.3x the same call made directly. */
const TARGET = 1.3;

/** Runs the group; answers its markdown, target checks and figures. */
export async function runUpstream(settings, log) {
  let driver;
  try {
    log("starting the upstream worker (server-everything twice: once per system)");
    driver = startWorker(fileURLToPath(new URL("./driver.mjs", import.meta.url)));
    const systems = [];
    let sqliteFile;
    for (const system of SYSTEMS) {
      const info = await driver.request("setup", { spec: { name: system.name, kind: system.kind } });
      if (info.sqliteFile !== undefined) sqliteFile = info.sqliteFile;
      systems.push({ ...system, driver });
    }
    const results = await measureInterleaved(systems, settings, (line) => log(line));
    const through = results.get("upstream-toolpact");
    checkLedger(await countLedger({ sqliteFile, tool: "bench.everything:echo@1" }), through.calls, "upstream-toolpact (SQLite)");
    return report(results, settings);
  } finally {
    await driver
      ?.request("close")
      .catch(() => {})
      .then(() => driver.stop());
  }
}

function report(results, settings) {
  const direct = results.get("upstream-direct");
  const paired = pairedRatios(results.get("upstream-toolpact"), direct);
  const rows = SYSTEMS.map((system) => {
    const { latency, rate } = results.get(system.name);
    const ratio = system.kind === "direct" ? { p50: 1, throughput: 1 } : paired;
    return [system.label, formatMs(latency.p50), formatMs(latency.p99), formatRatio(ratio.p50), formatRate(rate), formatRatio(ratio.throughput)];
  });
  const table = markdownTable(
    ["system", "p50 ms", "p99 ms", "p50 ÷ direct", `calls/s at ${settings.inFlight} in flight (range over rounds)`, "direct calls/s ÷ calls/s"],
    rows,
    ["l", "r", "r", "r", "r", "r"],
  );
  const targets = [
    {
      target: `upstream MCP server: a call through toolpact, p50 at most ${TARGET}x the same call made directly`,
      measured: formatRatio(paired.p50),
      met: paired.p50 <= TARGET,
    },
    {
      target: `upstream MCP server: throughput through toolpact at ${settings.inFlight} in flight at least 1/${TARGET} of direct`,
      measured: formatRatio(paired.throughput),
      met: paired.throughput <= TARGET,
    },
  ];
  const markdown = [
    table,
    "",
    "Both systems in one worker process, each with its own server-everything child over stdio (2025-11-25 for the direct client; the " +
      "revision the supervisor negotiates for toolpact). Through toolpact the caller's principal is established once; each call " +
      "validates the input against the manifest's copy of the server's schema, checks permission and policy, begins and settles a " +
      "durable operation with its activity row in SQLite, and sends one `tools/call`. The ledger is read back afterwards as in group 2. " +
      `${settings.rounds} interleaved sequential rounds, ${settings.throughputRounds} interleaved throughput rounds of ${settings.throughputSeconds} s; ` +
      "ratios paired per round against the direct call.",
  ].join("\n");
  return { markdown, targets, figures: { upstreamP50Ratio: paired.p50, upstreamThroughputRatio: paired.throughput } };
}
