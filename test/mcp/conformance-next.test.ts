/**
 * The official MCP conformance runner's 0.2 line (@modelcontextprotocol/conformance 0.2.0-alpha.12, installed
 * as `conformance-next`) against `/mcp`: exactly the server scenarios the 2026-07-28 revision requires, and
 * those 2025-11-25 requires, each with a baseline (conformance-next-baseline.yml) naming the scenarios that
 * do not apply to a tool server and why. A baseline scenario that starts passing fails, and so does any
 * other that fails. On Node 20 the runner needs `fs.globSync`: support/globsync is preloaded with --import.
 * The runner sends no credentials: a local proxy adds them.
 */
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConformanceTarget, type ConformanceTarget } from "./support/conformance-plugins.js";

const RUNNER = fileURLToPath(new URL("../../node_modules/conformance-next/dist/index.js", import.meta.url));
const GLOBSYNC_SHIM = fileURLToPath(new URL("./support/globsync/register.mjs", import.meta.url));
const BASELINE = fileURLToPath(new URL("./conformance-next-baseline.yml", import.meta.url));
const REVISIONS = ["2026-07-28", "2025-11-25"] as const;

/** The baseline's scenarios of one revision, as the runner reads a baseline: `server:` and a list. */
function baselineOf(revision: string): string {
  const text = readFileSync(BASELINE, "utf8");
  const section = new RegExp(`^"${revision}":\\n((?:  .*\\n|#.*\\n|\\n)*)`, "m").exec(text)?.[1] ?? "";
  const scenarios = [...section.matchAll(/^ {2}- ([\w-]+)/gm)].map((match) => match[1]!);
  return `server:\n${scenarios.map((scenario) => `  - ${scenario}`).join("\n")}\n`;
}

describe("MCP conformance, runner 0.2 (the scenarios each revision requires)", () => {
  let target: ConformanceTarget;

  beforeAll(async () => {
    target = await startConformanceTarget("toolpact-conformance-next-");
  });
  afterAll(async () => {
    await target?.close();
  });

  for (const revision of REVISIONS) {
    it(`passes every ${revision} scenario that applies; the baseline names exactly those that do not`, async () => {
      const baseline = path.join(target.results, `baseline-${revision}.yml`);
      writeFileSync(baseline, baselineOf(revision));
      const args = [
        "--import",
        GLOBSYNC_SHIM,
        RUNNER,
        "server",
        "--url",
        `${target.proxy.url}/mcp`,
        "--requirements",
        revision,
        "--expected-failures",
        baseline,
      ];
      const run = await promisify(execFile)(process.execPath, [...args, "-o", path.join(target.results, revision)], {
        timeout: 240_000,
        maxBuffer: 16 * 1024 * 1024,
      }).then(
        ({ stdout }) => ({ code: 0, stdout }),
        (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: `${error.stdout}\n${error.stderr}` }),
      );
      const summary = run.stdout.slice(run.stdout.lastIndexOf("=== SUMMARY ==="));
      expect(run.code, summary).toBe(0);
      expect(summary).toContain("Baseline check passed: all failures are expected.");
    }, 300_000);
  }
});
