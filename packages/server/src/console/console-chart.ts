/**
 * The console's chart of calls and refusals over time: an SVG drawn on the server (no script), with a
 * text description for screen readers. The runtime counts the buckets (`runtime.admin.views.activity`).
 */
import type { ActivityBucket } from "@toolpact/runtime";
import { escapeHtml } from "../visible-text.js";

const WIDTH = 720;
const HEIGHT = 160;
const AXIS = 20;

/** The SVG of the buckets: a bar per span for calls, and within it the refusals in red. */
export function renderChart(buckets: readonly ActivityBucket[]): string {
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
