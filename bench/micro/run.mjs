// Group "micro": per-call costs of toolpact's guarantees, measured in a separate process (see worker.mjs).
import { fileURLToPath } from "node:url";
import { startWorker } from "../lib/processes.mjs";
import { formatNs, formatRatio, markdownTable } from "../lib/stats.mjs";

const mbPerSecond = (bytes, ns) => `${(bytes / (1024 * 1024) / (ns / 1e9)).toFixed(0)} MB/s`;

/** Runs the group; `figures.trpcP50Ms` (from the overhead group, when it ran) turns costs into shares of one call. */
export async function runMicro(settings, log, figures = {}) {
  const worker = startWorker(fileURLToPath(new URL("./worker.mjs", import.meta.url)));
  let results;
  try {
    log("measuring");
    results = await worker.request("run", { seconds: settings.microSeconds });
  } finally {
    await worker.stop();
  }
  const callNs = figures.trpcP50Ms === undefined ? undefined : figures.trpcP50Ms * 1e6;
  // With the overhead group in the same run, each cost is also shown as a share of one bare tRPC call.
  const shareHeader = callNs === undefined ? [] : ["share of one bare tRPC call (p50)"];
  const share = (ns) => (callNs === undefined ? [] : [`${((ns / callNs) * 100).toFixed(ns / callNs < 0.01 ? 2 : 1)} %`]);
  const find = (group, prefix) => results.find((r) => r.group === group && r.name.startsWith(prefix));

  const zod = find("validation", "zod");
  const validation = markdownTable(
    ["input validation of a small object (6 fields, one pattern)", "per call", "÷ zod", ...shareHeader],
    results.filter((r) => r.group === "validation").map((r) => [r.name, formatNs(r.ns), formatRatio(r.ns / zod.ns), ...share(r.ns)]),
  );
  const jose = (op) => results.find((r) => r.group === "jwt" && r.op === op && r.library.startsWith("jose"));
  const jwt = markdownTable(
    ["JWT library, confirmation token claims (alg/typ/kid, signature, exp + 5 s, aud)", "per call", "÷ jose", ...shareHeader],
    results.filter((r) => r.group === "jwt").map((r) => [r.name, formatNs(r.ns), formatRatio(r.ns / jose(r.op).ns), ...share(r.ns)]),
  );
  const token = markdownTable(
    ["confirmation token (runtime's ConfirmationTokens, built dist)", "per call", ...shareHeader],
    results.filter((r) => r.group === "token").map((r) => [r.name, formatNs(r.ns), ...share(r.ns)]),
  );
  const digestRows = results
    .filter((r) => r.group === "digest")
    .map((r) => {
      const size = r.name.endsWith("1 MB") ? "1 MB" : "1 KB";
      const plain = find("digest", `HMAC-SHA256 over JSON.stringify, ${size}`);
      return [r.name, formatNs(r.ns), mbPerSecond(r.bytes, r.ns), formatRatio(r.ns / plain.ns), ...share(r.ns)];
    });
  const digest = markdownTable(["canonical digest", "per call", "rate", "÷ plain HMAC", ...shareHeader], digestRows);
  const cipher = markdownTable(
    ["AES-256-GCM of a kept payload (PayloadCipher, built dist)", "per call", "rate", ...shareHeader],
    results.filter((r) => r.group === "cipher").map((r) => [r.name, formatNs(r.ns), mbPerSecond(r.bytes, r.ns), ...share(r.ns)]),
  );
  const markdown = [
    validation,
    "",
    jwt,
    "",
    token,
    "",
    digest,
    "",
    cipher,
    "",
    `Median of batches over about ${settings.microSeconds} s per row, in a process of its own. "Share of one bare tRPC call" ` +
      "divides by the bare tRPC mutation's sequential p50 from the overhead group of this run. Token and cipher rows use the " +
      "runtime's own classes through a deep import of packages/runtime/dist (they are not part of its public API). " +
      "The JWT rows are the candidates the runtime chose its token library from (bench/micro/token-candidates.mjs): each mints " +
      "the same claims and verifies its own token with the same checks; the runtime uses the fastest, fast-jwt. " +
      "The 1 KB / 1 MB inputs are arrays of small records; sizes are of their canonical JSON.",
  ].join("\n");
  return { markdown, targets: [], figures: {} };
}
