// Group "codegen": runs bench/codegen/run.mjs (owned by the codegen work) as a subprocess and includes its
// tables, headings moved under this report's. The default run asks it for one run (--runs 1) to stay
// within the time budget; --full passes --full.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { stopChild } from "./processes.mjs";

const SCRIPT = fileURLToPath(new URL("../codegen/run.mjs", import.meta.url));

/** Runs the codegen benchmark; answers its markdown and the targets it reports. */
export async function runCodegen(settings, log) {
  const args = settings.full ? ["--full"] : ["--runs", String(settings.codegenRuns)];
  log(`node bench/codegen/run.mjs ${args.join(" ")}`);
  const child = spawn(process.execPath, [SCRIPT, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const timer = setTimeout(() => void stopChild(child), settings.codegenTimeoutMs);
  const [code, signal] = await new Promise((resolve) => child.once("exit", (...result) => resolve(result)));
  clearTimeout(timer);
  if (code !== 0) {
    throw new Error(
      `bench/codegen/run.mjs ${signal ? `was stopped (${signal}) after ${settings.codegenTimeoutMs / 1000} s` : `exited with code ${code}`}:\n${(stderr || stdout).slice(-3000)}`,
    );
  }
  const markdown = stdout
    .trim()
    .split("\n")
    .map((line) => (line.startsWith("# ") ? line.slice(2) : line.startsWith("#") ? `##${line}` : line))
    .join("\n");
  return { markdown, targets: codegenTargets(stdout), figures: {} };
}

/** The target rows of the codegen output, when they can be found (their wording is the codegen script's). */
function codegenTargets(text) {
  const targets = [];
  const codegen = /\| toolpact codegen[^|]*\|[^|]*\| ([\d.]+)x \|/.exec(text);
  if (codegen) {
    const ratio = Number(codegen[1]);
    targets.push({ target: "codegen of 2,000 tools: at most 1.2x json-schema-to-typescript alone", measured: `${ratio.toFixed(2)}x`, met: ratio <= 1.2 });
  }
  // The summary rows: | 2,000 | TS 6 | toolpact/floor | instantiations | verdict | tRPC/toolpact | memory | instantiations | verdict |
  for (const [compiler, trpcFloor] of /** @type {const} */ ([
    ["TS 6", 6],
    ["TS 7", 15],
  ])) {
    const row = new RegExp(`^\\| 2,000 \\| ${compiler} \\| ([\\d.]+)x \\| [\\d.]+x \\| at most[^|]*\\|(?: ([\\d.]+)x \\|)?`, "m").exec(text);
    if (!row) continue;
    const floorRatio = Number(row[1]);
    targets.push({
      target: `caller of 2,000 tools, ${compiler}: tsc Check time within 1.3x of the same tools as flat interfaces`,
      measured: `${floorRatio.toFixed(2)}x`,
      met: floorRatio <= 1.3,
    });
    if (row[2] !== undefined) {
      const trpcRatio = Number(row[2]);
      targets.push({
        target: `caller of 2,000 tools, ${compiler}: tsc Check time at least ${trpcFloor}x lower than the tRPC router + zod`,
        measured: `${trpcRatio.toFixed(2)}x lower`,
        met: trpcRatio >= trpcFloor,
      });
    }
  }
  return targets;
}
