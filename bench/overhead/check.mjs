// `node bench/run.mjs --check`: measures only the systems the regression guard compares (bench/lib/guard.mjs),
// in interleaved rounds as the overhead group does, and compares each paired ratio with its documented figure.
import { GUARDS, compareGuards, guardRatios, readDocumentedRatios, verdictTable } from "../lib/guard.mjs";
import { SYSTEMS, measureSystems } from "./run.mjs";

/**
 * The settings of `--smoke --check` (the CI guard, about 30 s): the general smoke settings measure one cold
 * round, which says nothing about a ratio; the guard needs warm processes and several paired rounds of
 * sequential calls (its ratios are p50s, so it runs no throughput rounds).
 */
export const SMOKE_CHECK_SETTINGS = Object.freeze({
  rounds: 6,
  sequentialCalls: 60,
  sequentialMaxMs: 400,
  throughputRounds: 0,
  throughputSeconds: 0,
  warmupCalls: 150,
  warmupSeconds: 0.5,
  inFlight: 32,
});

/**
 * Measures the guards (`keys`, default all) and answers a verdict per guard (see `compareGuards`).
 * `doubled` names systems whose every call is made twice, to see the guard fail; `page` stands in for docs/benchmarks.md.
 * @param {any} settings
 * @param {(line: string) => void} log
 * @param {{ keys?: readonly string[], doubled?: readonly string[], page?: string }} [options]
 */
export async function runCheck(settings, log, { keys, doubled = [], page } = {}) {
  const guards = GUARDS.filter((guard) => keys === undefined || keys.includes(guard.key));
  const unknown = (keys ?? []).filter((key) => !GUARDS.some((guard) => guard.key === key));
  if (unknown.length > 0) throw new Error(`no guard ${unknown.join(", ")}: the guards are ${GUARDS.map((guard) => guard.key).join(", ")}`);
  const documented = await readDocumentedRatios(page);
  const names = new Set(guards.flatMap((guard) => [guard.subject, guard.base]));
  const results = await measureSystems(
    SYSTEMS.filter((system) => names.has(system.name)),
    settings,
    log,
    { doubled },
  );
  return compareGuards(guardRatios(results, guards), documented, guards);
}

/** The environment variable naming systems whose calls `--check` makes twice (comma-separated): to watch the guard fail. */
export const DOUBLED_ENV = "TOOLPACT_BENCH_DOUBLED";

/** `--check` as a command: prints each guard's verdict and the wall time; answers the exit code (1 when a guard fails). */
export async function checkCommand(settings, log) {
  const started = performance.now();
  const doubled = (process.env[DOUBLED_ENV] ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  if (doubled.length > 0) log(`${DOUBLED_ENV}: every call of ${doubled.join(", ")} is made twice`);
  const verdicts = await runCheck(settings, log, { doubled });
  console.log(`\n${verdictTable(verdicts)}\n`);
  for (const verdict of verdicts) (verdict.failed ? console.error : console.log)(verdict.message);
  const failed = verdicts.filter((verdict) => verdict.failed);
  console.log(
    `\nregression guard: ${failed.length === 0 ? "passed" : `${failed.length} of ${verdicts.length} FAILED`} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return failed.length === 0 ? 0 : 1;
}
