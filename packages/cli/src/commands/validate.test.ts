import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli, runMain, preloadCommands } from "../cli-test-helpers.js";

beforeAll(() => preloadCommands("validate"), 180_000);

const fixtures = fileURLToPath(new URL("../../../contract/fixtures/", import.meta.url));

describe("toolpact validate (in process; the first case runs the real binary)", () => {
  it("prints a one-line summary per valid file and exits 0", async () => {
    const run = await runCli(["validate", "notes.plugin.json", "read-only.plugin.json"], { cwd: fixtures });
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^ok notes\.plugin\.json: com\.example\.notes@\S+, \d+ tools \(/);
    expect(run.stderr).toBe("");
  });

  it("shows warnings but still exits 0", async () => {
    const run = await runMain(["validate", "schema-warnings.plugin.json"], { cwd: fixtures });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^schema-warnings\.plugin\.json:\d+:\d+: warning: /m);
    expect(run.stdout).toMatch(/warning/);
  });

  it("prints every diagnostic as file:line:col and exits 1 when any file is invalid", async () => {
    const run = await runMain(["validate", "notes.plugin.json", "invalid/many-problems.plugin.json"], { cwd: fixtures });
    expect(run.code).toBe(1);
    const errors = run.stderr.split("\n").filter((line) => /^invalid\/many-problems\.plugin\.json:\d+:\d+: error: /.test(line));
    expect(errors.length).toBeGreaterThan(2);
    expect(run.stdout).toMatch(/^ok notes\.plugin\.json/m);
    expect(run.stdout).toMatch(/^invalid invalid\/many-problems\.plugin\.json: \d+ errors$/m);
  });

  it("reports a schema typo at its line with a hint", async () => {
    const run = await runMain(["validate", "invalid/schema-type-typo.plugin.json"], { cwd: fixtures });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/:\d+:\d+: error: .*"strnig" is not a JSON Schema type; did you mean "string"\?/);
  });

  it("reports a missing file as a diagnostic, not a crash", async () => {
    const run = await runMain(["validate", "no-such.plugin.json"], { cwd: fixtures });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^no-such\.plugin\.json:1:1: error: /m);
  });

  it("exits 2 on usage errors", async () => {
    expect((await runMain(["validate"])).code).toBe(2);
    expect((await runMain(["validate", "--bogus", "x.json"])).code).toBe(2);
    expect((await runMain(["no-such-command"])).code).toBe(2);
    expect((await runMain([])).code).toBe(2);
  });
});
