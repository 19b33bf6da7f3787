// `pnpm bench`: every benchmark side by side in one run, printed as markdown tables with ratios.
// Uses the built packages (dist): `pnpm bench` builds first; otherwise run `pnpm build` before.
//   node bench/run.mjs                 default run (about 5 minutes on an idle 2-core machine)
//   node bench/run.mjs --full          longer and steadier (about 12 minutes)
//   node bench/run.mjs --only durable  one group (overhead | durable | micro | codegen | telemetry | isolation | upstream; comma-separated for several)
//   node bench/run.mjs --write         also replace the results in docs/benchmarks.md
//   node bench/run.mjs --smoke         checks the harness in about a minute (figures mean nothing)
//   node bench/run.mjs --smoke --check the regression guard (CI, about 30 s): a few paired ratios against the
//                                      figures docs/benchmarks.md documents; exits 1 when one is beyond 1.5x of its figure
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { runDurable } from "./durable/run.mjs";
import { runIsolation } from "./isolation/run.mjs";
import { runCodegen } from "./lib/codegen-group.mjs";
import { DOC } from "./lib/guard.mjs";
import { describeMachine, loadAverage } from "./lib/machine.mjs";
import { refuseNewChildren, stopAllChildren } from "./lib/processes.mjs";
import { SCRATCH_ENV } from "./lib/scratch.mjs";
import { markdownTable, verdict } from "./lib/stats.mjs";
import { runMicro } from "./micro/run.mjs";
import { SETTINGS } from "./lib/settings.mjs";
import { SMOKE_CHECK_SETTINGS, checkCommand } from "./overhead/check.mjs";
import { runOverhead } from "./overhead/run.mjs";
import { runTelemetry } from "./telemetry/run.mjs";
import { runUpstream } from "./upstream/run.mjs";

const BEGIN = "<!-- bench:results:begin (written by `node bench/run.mjs --write`; edit outside these markers) -->";
const END = "<!-- bench:results:end -->";

/** In the order they run (micro uses the overhead group's tRPC p50; codegen's tsc runs go last); reports follow `order`. */
const GROUPS = [
  { name: "overhead", order: 1, title: "1. Call overhead on loopback: the same no-op tool through each system", run: runOverhead },
  { name: "durable", order: 2, title: "2. Durable throughput: SQLite and PostgreSQL ledgers", run: runDurable },
  { name: "micro", order: 4, title: "4. Micro costs of the guarantees (in process)", run: runMicro },
  { name: "telemetry", order: 5, title: "5. OpenTelemetry: the read execute with no SDK, an SDK recording nothing, and an SDK exporting", run: runTelemetry },
  { name: "isolation", order: 6, title: "6. Isolated provider: the read execute with the provider in a child process beside in process", run: runIsolation },
  { name: "upstream", order: 7, title: "7. Upstream MCP server: a real server's tool through toolpact beside the same call made directly", run: runUpstream },
  { name: "codegen", order: 3, title: "3. Codegen and type-checking (bench/codegen/run.mjs)", run: runCodegen },
];

const HELP = `usage: node bench/run.mjs [--full | --smoke] [--only <group>[,<group>...]] [--write | --check]
groups: ${GROUPS.map((group) => group.name).join(", ")}`;

function parseOptions() {
  const { values } = parseArgs({
    options: {
      full: { type: "boolean" },
      smoke: { type: "boolean" },
      only: { type: "string" },
      write: { type: "boolean" },
      check: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(HELP);
    process.exit(0);
  }
  if (values.full && values.smoke) throw new Error("--full and --smoke exclude each other");
  const only = values.only?.split(",").map((name) => name.trim());
  const unknown = only?.filter((name) => !GROUPS.some((group) => group.name === name)) ?? [];
  if (unknown.length > 0) throw new Error(`unknown group ${unknown.map((name) => `"${name}"`).join(", ")}: ${HELP}`);
  if (values.write && values.smoke) throw new Error("--smoke figures mean nothing: it does not --write");
  if (values.check && (values.write || only)) throw new Error("--check measures the regression guard's own systems: it takes no --write or --only");
  const mode = values.full ? "full" : values.smoke ? "smoke" : "default";
  const command = `node bench/run.mjs${process.argv.length > 2 ? ` ${process.argv.slice(2).join(" ")}` : ""}`;
  return {
    mode,
    settings: { ...SETTINGS[mode], full: mode === "full", inFlight: 32, codegenTimeoutMs: (mode === "full" ? 30 : 8) * 60_000 },
    groups: GROUPS.filter((group) => only === undefined || only.includes(group.name)),
    write: values.write === true,
    check: values.check === true,
    command,
  };
}

function header(machine, options, started, loads) {
  const versions = Object.entries(machine.versions)
    .map(([name, version]) => `${name} ${version}`)
    .join(" · ");
  return [
    `Run ${started.toISOString().replace(/\.\d+Z$/, "Z")} with \`${options.command}\` (${options.mode} settings); ` +
      `1-minute load average ${loads.start} at the start, ${loads.end} at the end, at most ${loads.max} during the run.`,
    "",
    `Machine: ${machine.cores} cores (\`nproc\`), ${machine.cpu}, ${machine.memoryGiB} GiB memory, ${machine.platform}.`,
    "",
    `Versions: ${versions}.`,
  ].join("\n");
}

function targetTable(targets) {
  return markdownTable(
    ["target (DESIGN.md)", "measured", "verdict"],
    targets.map((t) => [t.target, t.measured, t.met === undefined ? "" : verdict(t.met)]),
    ["l", "r", "l"],
  );
}

async function writeDoc(results) {
  let doc;
  try {
    doc = await readFile(DOC, "utf8");
  } catch {
    doc = `# Benchmarks\n\n${BEGIN}\n${END}\n`;
  }
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${DOC} has no results markers: put ${BEGIN} and ${END} where the results go`);
  await writeFile(DOC, `${doc.slice(0, begin + BEGIN.length)}\n${results}\n${doc.slice(end)}`);
}

async function main() {
  let options;
  try {
    options = parseOptions();
  } catch (error) {
    console.error(`bench: ${error.message}`);
    process.exitCode = 2;
    return;
  }
  const log = (group) => (line) => process.stderr.write(`[bench ${group}] ${line}\n`);
  if (options.check) {
    process.exitCode = await checkCommand(options.mode === "smoke" ? SMOKE_CHECK_SETTINGS : options.settings, log("check"));
    return;
  }
  const started = new Date();
  const loadAtStart = loadAverage();
  // The machine may be shared: the highest load average seen during the run goes into the report.
  let maxLoad = Number(loadAtStart);
  const loadSampler = setInterval(() => (maxLoad = Math.max(maxLoad, Number(loadAverage()))), 2_000);
  const machine = await describeMachine();
  const sections = [];
  const targets = [];
  const failures = [];
  const figures = {};
  const clock = performance.now();
  for (const group of options.groups) {
    if (interrupted) break;
    const groupStarted = performance.now();
    log(group.name)("starting");
    try {
      const result = await group.run({ ...options.settings, ...options.settings[group.name] }, log(group.name), figures);
      Object.assign(figures, result.figures);
      targets.push(...result.targets);
      sections.push({ group, markdown: result.markdown, seconds: (performance.now() - groupStarted) / 1000 });
      console.log(`\n### ${group.title}\n\n${result.markdown}\n`);
    } catch (error) {
      failures.push({ group, error });
      log(group.name)(`FAILED: ${error.stack ?? error}`);
    } finally {
      await stopAllChildren();
    }
    log(group.name)(`done in ${((performance.now() - groupStarted) / 1000).toFixed(1)} s`);
  }
  clearInterval(loadSampler);
  const loads = { start: loadAtStart, end: loadAverage(), max: Math.max(maxLoad, Number(loadAverage())).toFixed(2) };
  const totalSeconds = (performance.now() - clock) / 1000;
  const ordered = [...sections].sort((a, b) => a.group.order - b.group.order);
  const results = [
    header(machine, options, started, loads),
    "",
    ...(targets.length > 0 ? ["### Targets", "", targetTable(targets), ""] : []),
    ...ordered.flatMap((section) => [`### ${section.group.title}`, "", section.markdown, ""]),
    `Total ${totalSeconds.toFixed(0)} s (${ordered.map((section) => `${section.group.name} ${section.seconds.toFixed(0)} s`).join(", ")}).`,
  ].join("\n");
  console.log(`\n## Summary\n\n${header(machine, options, started, loads)}\n`);
  if (targets.length > 0) console.log(`${targetTable(targets)}\n`);
  console.log(`Total ${totalSeconds.toFixed(0)} s.`);
  if (interrupted) {
    console.error("\ninterrupted: the results are incomplete and were not written.");
    process.exitCode = 130;
    return;
  }
  if (failures.length > 0) {
    for (const { group, error } of failures) console.error(`\nbench group "${group.name}" FAILED: ${error.message}`);
    console.error(options.write ? "\ndocs/benchmarks.md was not written: fix the failures and run again." : "");
    process.exitCode = 1;
    return;
  }
  if (options.write) {
    await writeDoc(results);
    console.log(`wrote the results into ${DOC}`);
  }
}

// An interrupt stops the children; the running group then fails and cleans up (temp files, PostgreSQL
// databases) on its way out. A second interrupt, or 30 s, ends the process at once.
let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write(`\n[bench] ${signal}: stopping child processes and cleaning up (again to quit at once)\n`);
    refuseNewChildren();
    void stopAllChildren();
    setTimeout(() => process.exit(130), 30_000).unref();
  });
}

const scratch = await mkdtemp(path.join(tmpdir(), "toolpact-bench-run-"));
process.env[SCRATCH_ENV] = scratch;
try {
  await main();
} finally {
  await stopAllChildren();
  await rm(scratch, { recursive: true, force: true });
}
