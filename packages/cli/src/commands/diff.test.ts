import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runMain, preloadCommands } from "../cli-test-helpers.js";

beforeAll(() => preloadCommands("diff"), 180_000);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
/** The real binary, built by `pnpm build` (run `pnpm exec tsc -b packages/cli` before testing alone). */
const BIN = join(ROOT, "packages/cli/dist/bin.js");

let dir: string;
let notes: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "toolpact-cli-diff-"));
  notes = await readFile(join(ROOT, "codegen/fixtures/notes.plugin.json"), "utf8");
  await writeFile(join(dir, "old.json"), notes);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `toolpact diff old.json new.json` in process (main(argv, io)), or as the real binary. */
async function diffAgainst(next: string, binary = false) {
  await writeFile(join(dir, "new.json"), next);
  if (!binary) return runMain(["diff", "old.json", "new.json"], { cwd: dir });
  const result = spawnSync(process.execPath, [BIN, "diff", "old.json", "new.json"], { cwd: dir, encoding: "utf8", timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("toolpact diff (in process; the first case runs the real binary)", () => {
  it("exits 0 without breaking changes (the real binary)", async () => {
    const run = await diffAgainst(notes.replace('"version": "1.4.0"', '"version": "1.4.1"'), true);
    expect(run.stdout.trim()).toBe("toolpact diff: no breaking changes in com.example.notes (1.4.0 -> 1.4.1)");
    expect(run.code).toBe(0);
  });

  it("exits 1 when a tool version changes incompatibly in place, listing each change", async () => {
    const run = await diffAgainst(
      notes.replace('"required": ["title", "tags"]', '"required": ["title", "tags", "body"]').replace('"effect": "read"', '"effect": "external"'),
    );
    expect(run.stdout.split("\n").filter(Boolean)).toEqual([
      "com.example.notes:create-record@2: breaking, without a version bump",
      '  input-required-added: input /properties/body: new required field "body"',
      "com.example.notes:search-records@1: breaking, without a version bump",
      "  effect-tightened: effect read became external",
      "  confirmation-tightened: now requires confirmation",
    ]);
    expect(run.stderr).toContain("2 tool versions change incompatibly without a version bump");
    expect(run.code).toBe(1);
  });

  it("exits 0 when the breaking change comes as a new tool version beside the old one", async () => {
    const v3 =
      '{ "name": "create-record", "version": 3, "effect": "write", "inputSchema": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title", "kind"] } },';
    const run = await diffAgainst(notes.replace('"tools": [', `"tools": [\n    ${v3}`));
    expect(run.stdout.trim().split("\n")).toEqual([
      "com.example.notes:create-record@3: new",
      "toolpact diff: no breaking changes in com.example.notes (1.4.0 -> 1.4.0)",
    ]);
    expect(run.code).toBe(0);
  });

  it("exits 1 with file:line:col diagnostics when a manifest is invalid", async () => {
    const run = await diffAgainst(notes.replace('"effect": "read"', '"effect": "reed"'));
    expect(run.stderr).toMatch(/^new\.json:\d+:\d+: error: .*reed/m);
    expect(run.stderr).toContain("toolpact diff: new.json is invalid");
    expect(run.code).toBe(1);
  });

  it("exits 2 on usage errors", async () => {
    const result = await runMain(["diff", "old.json"], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("name exactly two manifests");
  });
});
