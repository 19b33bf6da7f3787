// Summaries and markdown formatting of bench results.

/** The value at quantile `q` (0..1) of an ascending list (nearest rank). */
export function quantile(sorted, q) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** The median of a list (the upper one of the two middle values for an even count). */
export function median(values) {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

/** p50, p99 and count of latency samples. */
export function latencySummary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), n: sorted.length };
}

/** Median, lowest and highest rate of throughput rounds ({ calls, seconds } each). */
export function rateSummary(rounds) {
  const rates = rounds.map((round) => round.calls / round.seconds).sort((a, b) => a - b);
  return { median: median(rates), min: rates[0], max: rates[rates.length - 1], rounds: rates.length };
}

/** A markdown table; `align` holds "l" or "r" per column. */
export function markdownTable(header, rows, align = header.map((_, i) => (i === 0 ? "l" : "r"))) {
  const line = (cells) => `| ${cells.join(" | ")} |`;
  return [line(header), line(align.map((a) => (a === "r" ? "---:" : "---"))), ...rows.map(line)].join("\n");
}

const integer = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/** 12,345 */
export const formatCount = (value) => (Number.isFinite(value) ? integer.format(value) : "n/a");
/** Milliseconds with 3 decimals below 10 ms, 1 above. */
export const formatMs = (value) => (Number.isFinite(value) ? value.toFixed(value < 10 ? 3 : 1) : "n/a");
/** A cost ratio, "1.07x". */
export const formatRatio = (value) => (Number.isFinite(value) ? `${value >= 0.1 ? value.toFixed(2) : value.toPrecision(2)}x` : "n/a");

/** Nanoseconds as a readable duration: "850 ns", "12.4 µs", "3.21 ms". */
export function formatNs(ns) {
  if (!Number.isFinite(ns)) return "n/a";
  if (ns < 1_000) return `${Math.round(ns)} ns`;
  if (ns < 1_000_000) return `${(ns / 1_000).toFixed(ns < 10_000 ? 2 : 1)} µs`;
  return `${(ns / 1_000_000).toFixed(2)} ms`;
}

/** "1,523 (1,480-1,560)": median rate with the range over rounds. */
export const formatRate = (summary) =>
  summary.rounds > 1 ? `${formatCount(summary.median)} (${formatCount(summary.min)}-${formatCount(summary.max)})` : formatCount(summary.median);

/** "met" / "**NOT met**" for a target check. */
export const verdict = (met) => (met ? "met" : "**NOT met**");
