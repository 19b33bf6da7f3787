/**
 * The console's chart of calls and refusals over time: an SVG drawn on the server (no script), with a
 * text description for screen readers. A refusal is a call event whose outcome is `denied`.
 */
import type { ActivityEvent } from "@toolpact/runtime";
import { escapeHtml } from "../visible-text.js";

/** How many bars the chart has. */
const BUCKETS = 24;
const WIDTH = 720;
const HEIGHT = 160;
const AXIS = 20;

/** One bar: its start (Unix ms), and the calls and refusals in it. */
export interface ChartBucket {
  readonly start: number;
  readonly calls: number;
  readonly refusals: number;
}

/** Counts the call events into `BUCKETS` equal spans from `from` to `to` (Unix ms). */
export function bucketCalls(events: readonly ActivityEvent[], from: number, to: number): ChartBucket[] {
  const span = Math.max(1, to - from + 1);
  const width = span / BUCKETS;
  const buckets = Array.from({ length: BUCKETS }, (_, i) => ({ start: Math.floor(from + i * width), calls: 0, refusals: 0 }));
  for (const event of events) {
    if (event.kind !== "call") continue;
    const at = Date.parse(event.at);
    if (at < from || at > to) continue;
    const bucket = buckets[Math.min(BUCKETS - 1, Math.floor((at - from) / width))]!;
    bucket.calls += 1;
    if (event.outcome === "denied") bucket.refusals += 1;
  }
  return buckets;
}

/** The SVG of the buckets: a bar per span for calls, and within it the refusals in red. */
export function renderChart(buckets: readonly ChartBucket[]): string {
  const most = Math.max(1, ...buckets.map((bucket) => bucket.calls));
  const barWidth = WIDTH / buckets.length;
  const scale = (n: number) => ((HEIGHT - AXIS) * n) / most;
  const calls = buckets.reduce((sum, bucket) => sum + bucket.calls, 0);
  const refusals = buckets.reduce((sum, bucket) => sum + bucket.refusals, 0);
  const first = buckets[0];
  const last = buckets[buckets.length - 1];
  const label = (ms: number | undefined) => (ms === undefined ? "" : new Date(ms).toISOString().slice(0, 16).replace("T", " "));
  const bars = buckets
    .map((bucket, i) => {
      const x = (i * barWidth + 1).toFixed(1);
      const w = Math.max(1, barWidth - 2).toFixed(1);
      const callHeight = scale(bucket.calls);
      const refusalHeight = scale(bucket.refusals);
      const title = `${label(bucket.start)} UTC: ${count(bucket.calls, "call")}, ${bucket.refusals} refused`;
      return (
        `<g><title>${escapeHtml(title)}</title>` +
        `<rect class="calls" x="${x}" y="${(HEIGHT - AXIS - callHeight).toFixed(1)}" width="${w}" height="${callHeight.toFixed(1)}"/>` +
        `<rect class="refusals" x="${x}" y="${(HEIGHT - AXIS - refusalHeight).toFixed(1)}" width="${w}" height="${refusalHeight.toFixed(1)}"/></g>`
      );
    })
    .join("");
  const summary = `${count(calls, "call")}, ${refusals} refused, from ${label(first?.start)} to ${label(last?.start)} UTC; the tallest bar is ${count(most, "call")}.`;
  return (
    `<figure><svg class="chart" id="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="chart-title chart-desc">` +
    `<title id="chart-title">Calls and refusals over time</title><desc id="chart-desc">${escapeHtml(summary)}</desc>` +
    `<line class="axis" x1="0" y1="${HEIGHT - AXIS}" x2="${WIDTH}" y2="${HEIGHT - AXIS}"/>${bars}` +
    `<text x="0" y="${HEIGHT - 5}">${escapeHtml(label(first?.start))}</text>` +
    `<text x="${WIDTH}" y="${HEIGHT - 5}" text-anchor="end">${escapeHtml(label(last?.start))}</text></svg>` +
    `<figcaption class="legend"><span class="swatch-calls">&#9632; calls</span><span class="swatch-refusals">&#9632; refused</span>` +
    `<span id="chart-summary">${escapeHtml(summary)}</span></figcaption></figure>`
  );
}

/** "1 call", "2 calls". */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
