/**
 * The official MCP conformance runner (@modelcontextprotocol/conformance, pinned at 0.1.13: later ones
 * need Node 22) against `/mcp`, every server scenario, with conformance-baseline.yml naming the ones that
 * do not apply to a tool server and why. The runner sends no credentials: a local proxy adds them.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConformanceTarget, type ConformanceTarget } from "./support/conformance-plugins.js";

const RUNNER = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/conformance/dist/index.js", import.meta.url));
const BASELINE = fileURLToPath(new URL("./conformance-baseline.yml", import.meta.url));

/** The scenarios that apply to a tool server and must pass with at least one check. */
const APPLICABLE = [
  "server-initialize",
  "ping",
  "tools-list",
  "tools-call-simple-text",
  "tools-call-error",
  "json-schema-2020-12",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
];

describe("MCP conformance (server scenarios)", () => {
  let target: ConformanceTarget;

  beforeAll(async () => {
    target = await startConformanceTarget("toolpact-conformance-");
  });
  afterAll(async () => {
    await target?.close();
  });

  it("passes every scenario that applies; the baseline names exactly those that do not", async () => {
    const args = [RUNNER, "server", "--url", `${target.proxy.url}/mcp`, "--suite", "all", "--expected-failures", BASELINE, "-o", target.results];
    const run = await promisify(execFile)(process.execPath, args, { timeout: 150_000, maxBuffer: 16 * 1024 * 1024 }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: `${error.stdout}\n${error.stderr}` }),
    );
    const summary = run.stdout.slice(run.stdout.lastIndexOf("=== SUMMARY ==="));
    expect(run.code, summary).toBe(0);
    expect(summary).toContain("Baseline check passed: all failures are expected.");
    for (const scenario of APPLICABLE) expect(summary).toMatch(new RegExp(`✓ ${scenario}: [1-9][0-9]* passed, 0 failed`));
  }, 180_000);
});
