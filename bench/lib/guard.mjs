// The regression guard (`node bench/run.mjs --smoke --check`): a few paired ratios of the overhead group,
// each compared with the figure docs/benchmarks.md documents for it. The docs are the figures' one home:
// `--write` renders them (the overhead group's guard table) and `--check` reads them back from the page.
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { pairedRatios } from "./rounds.mjs";
import { markdownTable } from "./stats.mjs";

export const DOC = fileURLToPath(new URL("../../docs/benchmarks.md", import.meta.url));

/** A measured ratio fails the guard beyond this multiple of its documented figure: loose enough for a noisy 2-core machine, tight enough for a doubled cost. */
export const GUARD_SLACK = 1.5;

/**
 * The guarded ratios: `subject` against `base`, overhead systems measured in the same rounds, as cost
 * (above 1 = the subject is slower): the subject's sequential p50 ÷ the base's, paired round by round. In
 * process the base records each call in SQLite too: against bare `createCaller`, which never touches the
 * disk, a busy machine doubled the ratio (8.5x-11.5x against about 4x idle); against a base that commits a
 * row per call as toolpact's read does, back-to-back runs on that machine agreed within 1 %.
 * @type {readonly { key: string, label: string, subject: string, base: string, figure: "p50" }[]}
 */
export const GUARDS = Object.freeze([
  {
    key: "read-http-p50",
    label: "read execute over HTTP: p50 ÷ bare tRPC's on the same HTTP client",
    subject: "toolpact-read",
    base: "trpc-undici",
    figure: "p50",
  },
  {
    key: "confirmed-write-p50",
    label: "confirmed write (preview + execute) over HTTP: p50 ÷ one bare tRPC mutation's (httpLink)",
    subject: "toolpact-write",
    base: "trpc",
    figure: "p50",
  },
  {
    key: "in-process-p50",
    label: "`runtime.execute` of the read in process: p50 ÷ bare tRPC `createCaller`'s recording each call in SQLite",
    subject: "toolpact-in-process",
    base: "trpc-caller-logged",
    figure: "p50",
  },
]);

/** Each guard's ratio in a run's results (a Map of overhead system name to measurement). */
export function guardRatios(results, guards = GUARDS) {
  return new Map(guards.map((guard) => [guard.key, pairedRatios(results.get(guard.subject), results.get(guard.base))[guard.figure]]));
}

const HEADER = ["guarded ratio", "what it compares", "documented", `fails beyond (${GUARD_SLACK}x)`];
const ratio = (/** @type {number} */ value) => `${value.toFixed(3)}x`;

/** The table `--write` puts in the docs: the figures `--check` compares with. */
export function guardTable(ratios) {
  return markdownTable(
    HEADER,
    GUARDS.map((guard) => [`\`${guard.key}\``, guard.label, ratio(ratios.get(guard.key)), ratio(ratios.get(guard.key) * GUARD_SLACK)]),
    ["l", "l", "r", "r"],
  );
}

/** The documented figure of each guard, read from the page's guard table; a guard the page lacks is absent. */
export function documentedRatios(page) {
  const figures = new Map();
  const header = `| ${HEADER.join(" | ")} |`;
  const start = page.indexOf(header);
  if (start < 0) return figures;
  for (const line of page.slice(start).split("\n").slice(2)) {
    if (!line.startsWith("|")) break;
    const [key, , documented] = line
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.trim());
    const value = Number(/^([\d.]+)x$/.exec(documented ?? "")?.[1]);
    if (Number.isFinite(value) && value > 0) figures.set(key.replaceAll("`", ""), value);
  }
  return figures;
}

/** Reads the documented figures from docs/benchmarks.md (or `page`, for tests). */
export async function readDocumentedRatios(page) {
  return documentedRatios(page ?? (await readFile(DOC, "utf8")));
}

/**
 * Compares measured ratios with documented ones: a guard fails when its ratio is above GUARD_SLACK times
 * its figure, or when either is missing. Answers one verdict per guard, with the message a failure prints.
 */
export function compareGuards(measured, documented, guards = GUARDS) {
  return guards.map((guard) => {
    const figure = documented.get(guard.key);
    const value = measured.get(guard.key);
    if (figure === undefined) {
      return {
        guard,
        measured: value,
        failed: true,
        message: `guard "${guard.key}": docs/benchmarks.md documents no figure for it; run \`node bench/run.mjs --write\``,
      };
    }
    const limit = figure * GUARD_SLACK;
    if (value === undefined || !Number.isFinite(value)) {
      return { guard, documented: figure, limit, failed: true, message: `guard "${guard.key}" (${guard.label}): nothing was measured` };
    }
    const failed = value > limit;
    const message =
      `guard "${guard.key}" (${guard.label}): measured ${ratio(value)}, documented ${ratio(figure)}, ` +
      `limit ${ratio(limit)} (${GUARD_SLACK}x the documented figure): ${failed ? "a call got slower; profile it (bench/profile/) before it lands" : "within the limit"}`;
    return { guard, measured: value, documented: figure, limit, failed, message };
  });
}

/** The check's report: each guard with its measured ratio, documented figure, limit and verdict. */
export function verdictTable(verdicts) {
  const cell = (/** @type {number | undefined} */ value) => (value === undefined || !Number.isFinite(value) ? "n/a" : ratio(value));
  return markdownTable(
    ["guarded ratio", "measured", "documented", "limit", "verdict"],
    verdicts.map((v) => [`\`${v.guard.key}\``, cell(v.measured), cell(v.documented), cell(v.limit), v.failed ? "**fails**" : "passes"]),
    ["l", "r", "r", "r", "l"],
  );
}
