// Group "overhead": the same no-op tool (small object in, small object out) through each system people
// would pick, servers and load client in separate processes, interleaved rounds. Ratios against bare tRPC.
import { fileURLToPath } from "node:url";
import { checkLedger, countLedger } from "../lib/ledger.mjs";
import { startJsonServer, startWorker, stopChild } from "../lib/processes.mjs";
import { measureInterleaved, pairedRatios } from "../lib/rounds.mjs";
import { formatMs, formatRate, formatRatio, markdownTable } from "../lib/stats.mjs";
import { startToolpactHosts } from "../lib/toolpact-host.mjs";

const here = (file) => fileURLToPath(new URL(file, import.meta.url));

/** The compared systems, in table order. `base` names the system the tRPC baseline is. */
/** @type {{ name: string, label: string, how: string, driver: "load" | "inProcess", kind: string, server?: string }[]} */
const SYSTEMS = [
  { name: "node-http", label: "bare `node:http` JSON (the floor)", how: "HTTP, fetch", driver: "load", kind: "bare-http", server: "bare-http" },
  { name: "trpc", label: "bare tRPC v11 mutation (standalone adapter + zod)", how: "HTTP, httpLink", driver: "load", kind: "trpc", server: "bare-trpc" },
  {
    name: "trpc-undici",
    label: "bare tRPC (undici, same client)",
    how: "HTTP, httpLink on createHttpTransport's undici pool",
    driver: "load",
    kind: "trpc-undici",
    server: "bare-trpc",
  },
  {
    name: "toolpact-read",
    label: "toolpact read-tool execute (`toolpact serve`, SQLite ledger)",
    how: "HTTP, createHttpTransport",
    driver: "load",
    kind: "toolpact-read",
    server: "toolpact",
  },
  {
    name: "toolpact-write",
    label: "toolpact confirmed write: preview + execute, token mode (2 round trips)",
    how: "HTTP, createHttpTransport",
    driver: "load",
    kind: "toolpact-write",
    server: "toolpact",
  },
  {
    name: "mcp-stateless",
    label: "MCP SDK `tools/call`, Streamable HTTP, stateless",
    how: "HTTP, MCP SDK client",
    driver: "load",
    kind: "mcp",
    server: "mcp-stateless",
  },
  {
    name: "mcp-session",
    label: "MCP SDK `tools/call`, Streamable HTTP, session",
    how: "HTTP, MCP SDK client",
    driver: "load",
    kind: "mcp",
    server: "mcp-session",
  },
  {
    name: "toolpact-mcp-stateless",
    label: "toolpact MCP bridge `tools/call` (`/mcp`, SQLite ledger), stateless",
    how: "HTTP, MCP SDK client",
    driver: "load",
    kind: "toolpact-mcp-stateless",
    server: "toolpact",
  },
  {
    name: "toolpact-mcp-session",
    label: "toolpact MCP bridge `tools/call` (`/mcp`, SQLite ledger), session",
    how: "HTTP, MCP SDK client",
    driver: "load",
    kind: "toolpact-mcp",
    server: "toolpact",
  },
  {
    name: "mcp-v2-2026",
    label: "MCP SDK v2 `tools/call` at 2026-07-28, Streamable HTTP, stateless (createMcpHandler)",
    how: "HTTP, MCP SDK v2 client",
    driver: "load",
    kind: "mcp-2026",
    server: "mcp-v2",
  },
  {
    name: "toolpact-mcp-2026",
    label: "toolpact MCP bridge `tools/call` at 2026-07-28 (`/mcp`, SQLite ledger)",
    how: "HTTP, MCP SDK v2 client",
    driver: "load",
    kind: "toolpact-mcp-2026",
    server: "toolpact",
  },
  {
    name: "toolpact-in-process",
    label: "toolpact `runtime.execute` in process (SQLite ledger)",
    how: "in process",
    driver: "inProcess",
    kind: "toolpact-runtime",
  },
  {
    name: "toolpact-in-process-transport",
    label: "toolpact in-process transport (createCaller, authenticates each call)",
    how: "in process",
    driver: "inProcess",
    kind: "toolpact-transport",
  },
  { name: "trpc-caller", label: "bare tRPC `createCaller` in process", how: "in process", driver: "inProcess", kind: "trpc-caller" },
];

async function startServers() {
  const started = await Promise.allSettled([
    startJsonServer(here("./servers/bare-http.mjs")),
    startJsonServer(here("./servers/bare-trpc.mjs")),
    startJsonServer(here("./servers/mcp.mjs"), { args: ["stateless"] }),
    startJsonServer(here("./servers/mcp.mjs"), { args: ["session"] }),
    startToolpactHosts(),
    startJsonServer(here("./servers/mcp-v2.mjs")),
  ]);
  const failed = started.find((result) => result.status === "rejected");
  if (failed !== undefined) {
    // The toolpact host owns a temp dir: stop it properly; the other children go with the group.
    const host = started[4];
    if (host.status === "fulfilled") await host.value.stop();
    throw failed.reason;
  }
  const [bareHttp, bareTrpc, mcpStateless, mcpSession, toolpact, mcpV2] = /** @type {[any, any, any, any, any, any]} */ (
    started.map((result) => /** @type {PromiseFulfilledResult<any>} */ (result).value)
  );
  return {
    "bare-http": { url: bareHttp.url, stop: () => stopChild(bareHttp.child) },
    "bare-trpc": { url: bareTrpc.url, stop: () => stopChild(bareTrpc.child) },
    "mcp-stateless": { url: mcpStateless.url, stop: () => stopChild(mcpStateless.child) },
    "mcp-session": { url: mcpSession.url, stop: () => stopChild(mcpSession.child) },
    "mcp-v2": { url: mcpV2.url, stop: () => stopChild(mcpV2.child) },
    toolpact: { urls: toolpact.urls, pluginKey: toolpact.pluginKey, actorToken: toolpact.actorToken, sqliteFile: toolpact.sqliteFile, stop: toolpact.stop },
  };
}

/** Runs the group; answers its markdown, its target checks and the figures other groups compare with. */
export async function runOverhead(settings, log) {
  const servers = {};
  const drivers = {};
  try {
    log("starting servers and load workers");
    Object.assign(servers, await startServers());
    drivers.load = startWorker(fileURLToPath(new URL("../lib/load-driver.mjs", import.meta.url)));
    drivers.inProcess = startWorker(fileURLToPath(new URL("../lib/in-process-driver.mjs", import.meta.url)));
    const systems = [];
    const infos = new Map();
    for (const system of SYSTEMS) {
      const server = system.server === undefined ? {} : servers[system.server];
      const spec = { name: system.name, kind: system.kind, url: server.url, urls: server.urls, pluginKey: server.pluginKey, actorToken: server.actorToken };
      infos.set(system.name, await drivers[system.driver].request("setup", { spec }));
      systems.push({ ...system, driver: drivers[system.driver] });
    }

    const results = await measureInterleaved(systems, settings, (line) => log(line));

    // Every toolpact read call, over tRPC or MCP, left one operation and one activity row in its store.
    const served = ["toolpact-read", "toolpact-mcp-stateless", "toolpact-mcp-session", "toolpact-mcp-2026"].reduce(
      (sum, name) => sum + results.get(name).calls,
      0,
    );
    checkLedger(await countLedger({ sqliteFile: servers.toolpact.sqliteFile }), served, "toolpact serve (SQLite), read execute over tRPC and MCP");
    for (const name of ["toolpact-in-process", "toolpact-in-process-transport"]) {
      checkLedger(await countLedger({ sqliteFile: infos.get(name).sqliteFile }), results.get(name).calls, `${name} (SQLite)`);
    }
    return report(results, settings);
  } finally {
    await Promise.all(
      Object.values(drivers).map((driver) =>
        driver
          .request("close")
          .catch(() => {})
          .then(() => driver.stop()),
      ),
    );
    await Promise.all(Object.values(servers).map((server) => server.stop()));
  }
}

/**
 * The read execute against its peers: within 1.10x of bare tRPC on the same HTTP client (the server's own
 * cost), and ahead of bare tRPC with httpLink and of the MCP SDK with a session (what a caller would pick).
 */
function readTargets(results, inFlight) {
  const read = results.get("toolpact-read");
  const against = (name) => pairedRatios(read, results.get(name));
  const sameClient = against("trpc-undici");
  const peers = [
    ["trpc", "bare tRPC (httpLink)"],
    ["mcp-session", "the MCP SDK with a session"],
  ];
  return [
    {
      target: "read-tool execute over HTTP: p50 within 1.10x of bare tRPC on the same client",
      measured: targetRatio(sameClient.p50),
      met: sameClient.p50 <= 1.1,
    },
    {
      target: `read-tool execute over HTTP: throughput at ${inFlight} in flight within 1.10x of bare tRPC on the same client`,
      measured: targetRatio(sameClient.throughput),
      met: sameClient.throughput <= 1.1,
    },
    ...peers.flatMap(([name, label]) => {
      const ratio = against(name);
      return [
        { target: `read-tool execute over HTTP: lower p50 than ${label}`, measured: targetRatio(ratio.p50), met: ratio.p50 < 1 },
        {
          target: `read-tool execute over HTTP: higher throughput at ${inFlight} in flight than ${label}`,
          measured: targetRatio(ratio.throughput),
          met: ratio.throughput < 1,
        },
      ];
    }),
  ];
}

/** Three decimals, so a ratio next to its target shows on which side it fell. */
const targetRatio = (/** @type {number} */ value) => `${value.toFixed(3)}x`;

function report(results, settings) {
  const base = results.get("trpc");
  const ratioMap = new Map(SYSTEMS.map((system) => [system.name, pairedRatios(results.get(system.name), base)]));
  const ratios = { get: (/** @type {string} */ name) => /** @type {{ p50: number, throughput: number }} */ (ratioMap.get(name)) };
  const rows = SYSTEMS.map((system) => {
    const { latency, rate } = results.get(system.name);
    const ratio = ratios.get(system.name);
    return [system.label, system.how, formatMs(latency.p50), formatMs(latency.p99), formatRatio(ratio.p50), formatRate(rate), formatRatio(ratio.throughput)];
  });
  const table = markdownTable(
    ["system", "client", "p50 ms", "p99 ms", "p50 ÷ tRPC p50", `calls/s at ${settings.inFlight} in flight (range over rounds)`, "tRPC calls/s ÷ calls/s"],
    rows,
    ["l", "l", "r", "r", "r", "r", "r"],
  );
  const write = ratios.get("toolpact-write");
  const inProcess = results.get("toolpact-in-process");
  const targets = [
    ...readTargets(results, settings.inFlight),
    {
      target: "confirmed write (preview + execute) p50: at most 2.0x one bare tRPC mutation",
      measured: targetRatio(write.p50),
      met: write.p50 <= 2.0,
    },
    ...["toolpact-mcp-session", "toolpact-mcp-stateless"].map((name) => {
      const ratio = pairedRatios(results.get(name), results.get("mcp-stateless")).p50;
      return {
        target: `MCP bridge \`tools/call\` of the read tool, ${name.slice("toolpact-mcp-".length)}: p50 at most the MCP SDK's own stateless server's`,
        measured: targetRatio(ratio),
        met: ratio <= 1,
      };
    }),
    (() => {
      const ratio = pairedRatios(results.get("toolpact-mcp-2026"), results.get("mcp-v2-2026")).p50;
      return {
        target: "MCP bridge `tools/call` of the read tool at 2026-07-28: p50 at most the MCP SDK v2's own stateless server's",
        measured: targetRatio(ratio),
        met: ratio <= 1,
      };
    })(),
    {
      target: `in-process durable execute on SQLite: at least 40,000 calls/s at ${settings.inFlight} in flight`,
      measured: `${formatRate({ ...inProcess.rate, rounds: 1 })} calls/s`,
      met: inProcess.rate.median >= 40_000,
    },
    {
      target: "in-process durable execute on SQLite: at least 20,000 calls/s for one sequential caller (1 / sequential p50)",
      measured: `${Math.round(1_000 / inProcess.latency.p50).toLocaleString("en-US")} calls/s`,
      met: 1_000 / inProcess.latency.p50 >= 20_000,
    },
  ];
  const markdown = [
    table,
    "",
    `Sequential: ${results.get("toolpact-read").latency.n.toLocaleString("en-US")} calls per system in ${settings.rounds} interleaved rounds; ` +
      `p50/p99 pooled over the rounds. Throughput: ${settings.throughputRounds} interleaved rounds of ${settings.throughputSeconds} s per system ` +
      `at ${settings.inFlight} calls in flight, median round shown with the range, after a warm-up of ${settings.warmupCalls} sequential calls ` +
      `and ${settings.warmupSeconds} s at full concurrency. Ratios are paired: each round's figure against bare tRPC's in the same round, ` +
      "then the median over rounds (above 1.00x = slower than bare tRPC; the confirmed write counts one write as one call). " +
      "Each HTTP server runs in its own process and the HTTP load client in another; the in-process rows run in a third. " +
      '`createHttpTransport` sends on an undici keep-alive pool in Node; the row "bare tRPC (undici, same client)" runs the bare tRPC server ' +
      "through tRPC's httpLink on that very pool, so the gap between it and the read execute is the toolpact server's own cost. " +
      "Every call checks the answer it got; every toolpact call (over tRPC or through the MCP bridge) is durable, and its operation and activity row were counted in the database afterwards. " +
      "The MCP bridge rows run inside the same `toolpact serve` as the tRPC rows, authenticate every request with the plugin key and actor token, and run the whole pipeline; " +
      "stateless, the SDK client never sees a session id, so each call gets a server and transport of its own (as the SDK's stateless server does). " +
      `In process, bare tRPC \`createCaller\` does ${formatRatio(pairedRatios(inProcess, results.get("trpc-caller")).throughput)} ` +
      "the calls per second of toolpact's durable `runtime.execute` (paired the same way).",
  ].join("\n");
  return {
    markdown,
    targets,
    figures: { trpcP50Ms: base.latency.p50 },
  };
}
