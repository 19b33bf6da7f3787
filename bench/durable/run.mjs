// Group "durable": read-tool execute with the SQLite ledger and the PostgreSQL ledger, in process and through
// `toolpact serve` (1 instance, and 3 instances on one database). After the rounds the ledger is read back
// from the database: succeeded operations and execute activity rows must equal the calls that succeeded.
// What one call costs the PostgreSQL store in statements: `node bench/durable/statements.mjs`.
import { fileURLToPath } from "node:url";
import { checkLedger, countLedger } from "../lib/ledger.mjs";
import { POSTGRES_URL, createFreshDatabase, postgresVersion } from "../lib/postgres.mjs";
import { startWorker } from "../lib/processes.mjs";
import { measureInterleaved, pairedRatios } from "../lib/rounds.mjs";
import { formatCount, formatMs, formatRate, formatRatio, markdownTable } from "../lib/stats.mjs";
import { startToolpactHosts } from "../lib/toolpact-host.mjs";
import { hasPostgresStore } from "../lib/world.mjs";

/** How often the audit rows' runtime checkpoints the activity log (settle window 0: every event so far), ms. */
const AUDIT_CHECKPOINT_MS = 250;

/**
 * `auditOf`: the same configuration with the checkpoint job running, compared with the one it names (paired rounds).
 * @type {{ name: string, label: string, store: string, instances: number | "-", driver: "load" | "inProcess", kind: string, postgres?: boolean, auditOf?: string }[]}
 */
const CONFIGS = [
  { name: "inproc-sqlite", label: "in process, `runtime.execute`", store: "SQLite", instances: "-", driver: "inProcess", kind: "toolpact-runtime" },
  {
    name: "inproc-postgres",
    label: "in process, `runtime.execute`",
    store: "PostgreSQL",
    instances: "-",
    driver: "inProcess",
    kind: "toolpact-runtime",
    postgres: true,
  },
  {
    name: "inproc-sqlite-audit",
    label: `in process, \`runtime.execute\`, activity checkpointed every ${AUDIT_CHECKPOINT_MS} ms`,
    store: "SQLite",
    instances: "-",
    driver: "inProcess",
    kind: "toolpact-runtime",
    auditOf: "inproc-sqlite",
  },
  {
    name: "inproc-postgres-audit",
    label: `in process, \`runtime.execute\`, activity checkpointed every ${AUDIT_CHECKPOINT_MS} ms`,
    store: "PostgreSQL",
    instances: "-",
    driver: "inProcess",
    kind: "toolpact-runtime",
    postgres: true,
    auditOf: "inproc-postgres",
  },
  { name: "serve-sqlite", label: "`toolpact serve` over HTTP", store: "SQLite", instances: 1, driver: "load", kind: "toolpact-read" },
  { name: "serve-postgres-1", label: "`toolpact serve` over HTTP", store: "PostgreSQL", instances: 1, driver: "load", kind: "toolpact-read", postgres: true },
  {
    name: "serve-postgres-3",
    label: "`toolpact serve` over HTTP, calls spread round-robin",
    store: "PostgreSQL",
    instances: 3,
    driver: "load",
    kind: "toolpact-read",
    postgres: true,
  },
];

/** Runs the group; PostgreSQL rows that cannot run (no store in this build, no server) are reported, not measured. */
export async function runDurable(settings, log) {
  const cleanups = [];
  const drivers = {};
  const unavailable = new Map();
  try {
    const server = await postgresVersion();
    const postgresProblem =
      server.error !== undefined
        ? `PostgreSQL at ${POSTGRES_URL} is not reachable (${server.error})`
        : hasPostgresStore
          ? undefined
          : "this build of @toolpact/runtime exports no createStore/createPostgresStore yet";

    drivers.load = startWorker(fileURLToPath(new URL("../lib/load-driver.mjs", import.meta.url)));
    drivers.inProcess = startWorker(fileURLToPath(new URL("../lib/in-process-driver.mjs", import.meta.url)));
    const systems = [];
    const ledgers = new Map();
    for (const config of CONFIGS) {
      if (config.postgres && postgresProblem !== undefined) {
        unavailable.set(config.name, postgresProblem);
        continue;
      }
      log(`setting up ${config.name}`);
      let database;
      if (config.postgres) {
        const fresh = await createFreshDatabase();
        cleanups.push(() => fresh.drop());
        database = fresh.url;
      }
      /** @type {Record<string, unknown>} */
      let spec = { name: config.name, kind: config.kind, database, ...(config.auditOf === undefined ? {} : { checkpointEveryMs: AUDIT_CHECKPOINT_MS }) };
      if (config.driver === "load") {
        let hosts;
        try {
          hosts = await startToolpactHosts({ database, instances: config.instances === "-" ? 1 : config.instances });
        } catch (error) {
          // A host build that refuses postgres:// URLs is reported as unavailable; any other failure stops the run.
          const refusal = /toolpact serve: (.*PostgreSQL.*not supported.*)$/im.exec(error.message)?.[1];
          if (config.postgres && refusal !== undefined) {
            unavailable.set(config.name, `\`toolpact serve\` in this build refuses a postgres:// database ("${refusal.trim()}")`);
            continue;
          }
          throw error;
        }
        cleanups.push(() => hosts.stop());
        spec = { ...spec, urls: hosts.urls, pluginKey: hosts.pluginKey, actorToken: hosts.actorToken };
        ledgers.set(config.name, database === undefined ? { sqliteFile: hosts.sqliteFile } : { postgresUrl: database });
      }
      const info = await drivers[config.driver].request("setup", { spec });
      if (config.driver === "inProcess") ledgers.set(config.name, database === undefined ? { sqliteFile: info.sqliteFile } : { postgresUrl: database });
      systems.push({ ...config, driver: drivers[config.driver] });
    }

    const results = await measureInterleaved(systems, settings, log);
    const checked = new Map();
    for (const system of systems) {
      const { calls } = results.get(system.name);
      const counts = await countLedger(ledgers.get(system.name));
      checkLedger(counts, calls, `${system.label} on ${system.store}${system.instances === 3 ? " x3" : ""}`);
      checked.set(system.name, counts);
    }
    return report(results, checked, unavailable, settings, server.version);
  } finally {
    await Promise.all(
      Object.values(drivers).map((driver) =>
        driver
          .request("close")
          .catch(() => {})
          .then(() => driver.stop()),
      ),
    );
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error) => log(`cleanup failed: ${error.message}`));
  }
}

function report(results, checked, unavailable, settings, postgresVersionText) {
  const sqliteServe = results.get("serve-sqlite");
  const rows = CONFIGS.map((config) => {
    const result = results.get(config.name);
    if (result === undefined) return [config.label, config.store, String(config.instances), "not measured", "", "", "", ""];
    return [
      config.label,
      config.store,
      String(config.instances),
      formatRate(result.rate),
      config.driver === "load"
        ? formatRatio(1 / pairedRatios(result, sqliteServe).throughput)
        : config.auditOf !== undefined && results.has(config.auditOf)
          ? `${formatRatio(1 / pairedRatios(result, results.get(config.auditOf)).throughput)} of without`
          : "",
      formatMs(result.latency.p50),
      formatMs(result.latency.p99),
      `${formatCount(checked.get(config.name).activity)} = ${formatCount(result.calls)}`,
    ];
  });
  const notes = [...unavailable].map(([name, why]) => `- \`${name}\` not measured: ${why}.`);
  const markdown = [
    markdownTable(
      [
        "execute of the read tool",
        "ledger",
        "instances",
        `calls/s at ${settings.inFlight} in flight (range)`,
        "calls/s ÷ 1 instance on SQLite (paired)",
        "p50 ms",
        "p99 ms",
        "activity rows = calls",
      ],
      rows,
      ["l", "l", "r", "r", "r", "r", "r", "r"],
    ),
    "",
    `Each configuration has its own fresh database (PostgreSQL ${postgresVersionText ?? "n/a"}: a new database per configuration, dropped afterwards). ` +
      `${settings.inFlight} calls in flight in total; with 3 instances the load client sends them round-robin. After the rounds, ` +
      "the execute activity rows and succeeded operations were counted in the database and matched the calls that succeeded " +
      "(warm-up included), with no other rows of read calls; a mismatch fails the run. All processes (load client, servers, PostgreSQL) share this machine's cores.",
    ...(notes.length > 0 ? ["", ...notes] : []),
  ].join("\n");
  const postgres = results.get("serve-postgres-1");
  const postgresShare = postgres === undefined ? undefined : 1 / pairedRatios(postgres, sqliteServe).throughput;
  const targets =
    postgresShare === undefined
      ? []
      : [
          {
            target: `\`toolpact serve\` on PostgreSQL, 1 instance: at least 0.8x the throughput on SQLite (${settings.inFlight} in flight, paired)`,
            measured: formatRatio(postgresShare),
            met: postgresShare >= 0.8,
          },
        ];
  return { markdown, targets, figures: {} };
}
