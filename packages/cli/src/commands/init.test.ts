import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, runMain, preloadCommands } from "../cli-test-helpers.js";

beforeAll(() => preloadCommands("init", "validate"), 180_000);

const work = mkdtempSync(path.join(tmpdir(), "toolpact-init-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const cliVersion = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Record<string, Record<string, string>>;

describe("toolpact init (in process; the first case runs the real binary)", () => {
  it("scaffolds a provider whose manifest is valid, named after its folder, on this CLI's version of the packages", async () => {
    const run = await runCli(["init", "shopping-list"], { cwd: work });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout.split("\n").slice(0, 9)).toEqual([
      "toolpact init: wrote a provider plugin, com.example.shopping-list, in shopping-list",
      "  .gitignore",
      "  package.json",
      "  plugin.json",
      "  src/index.ts",
      "  src/plugin.test.ts",
      "  toolpact.config.json",
      "  tsconfig.json",
      "next:",
    ]);
    const dir = path.join(work, "shopping-list");
    const pkg = readJson(path.join(dir, "package.json"));
    expect(pkg.dependencies).toEqual({ "@toolpact/client": `^${cliVersion}` });
    expect(pkg.devDependencies).toMatchObject({
      "@toolpact/cli": `^${cliVersion}`,
      "@toolpact/runtime": `^${cliVersion}`,
      "@toolpact/server": `^${cliVersion}`,
    });
    expect(pkg.scripts!.test).toBe("npm run build && vitest run --dir src");
    const source = readFileSync(path.join(dir, "src/index.ts"), "utf8");
    expect(source).toContain("defineShoppingListProvider({");
    expect(readFileSync(path.join(dir, "src/plugin.test.ts"), "utf8")).toContain("host.client(createShoppingListClient)");
    expect(source + readFileSync(path.join(dir, "plugin.json"), "utf8")).not.toMatch(/\{\{/);
    const validate = await runMain(["validate", "plugin.json"], { cwd: dir });
    expect(validate.stdout.trim()).toBe("ok plugin.json: com.example.shopping-list@0.1.0, 2 tools (1 write, 1 read)");
    expect(readFileSync(path.join(dir, "plugin.json"), "utf8")).toContain('"$schema": "./node_modules/@toolpact/contract/manifest.schema.json"');
  });

  it("completes the package.json `npm init -y` wrote, keeping its fields and replacing its placeholder test script", async () => {
    const dir = path.join(work, "after-npm-init");
    mkdirSync(dir);
    const npmInit = {
      name: "after-npm-init",
      version: "1.0.0",
      main: "index.js",
      scripts: { test: 'echo "Error: no test specified" && exit 1', lint: "eslint ." },
      license: "ISC",
    };
    writeFileSync(path.join(dir, "package.json"), JSON.stringify(npmInit, null, 2));
    const run = await runMain(["init", "--id", "com.acme.todo"], { cwd: dir });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^toolpact init: wrote a provider plugin, com\.acme\.todo, in \.$/m);
    const pkg = readJson(path.join(dir, "package.json"));
    expect(pkg).toMatchObject({ name: "after-npm-init", version: "1.0.0", license: "ISC", type: "module", main: "index.js" });
    expect(pkg.scripts).toMatchObject({ test: "npm run build && vitest run --dir src", lint: "eslint .", build: expect.stringContaining("toolpact codegen") });
    expect(readFileSync(path.join(dir, "src/index.ts"), "utf8")).toContain("defineTodoProvider(");
  });

  it("overwrites nothing: a file in the way stops it before it writes anything", async () => {
    const dir = path.join(work, "taken");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "plugin.json"), "{}");
    const run = await runMain(["init", "taken"], { cwd: work });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      "toolpact init: taken/plugin.json already exists: init writes a new project and overwrites nothing; run it in an empty folder (or one with just package.json)",
    );
    expect(existsSync(path.join(dir, "src"))).toBe(false);
    expect(readFileSync(path.join(dir, "plugin.json"), "utf8")).toBe("{}");
  });

  it("scaffolds a caller of a provider: uses, no tools, its clients generated from the provider's manifest", async () => {
    await runMain(["init", "todo"], { cwd: work });
    const run = await runMain(["init", "assistant", "--caller", "--provider", "todo"], { cwd: work });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const dir = path.join(work, "assistant");
    expect(readJson(path.join(dir, "package.json")).scripts!.build).toBe(
      "toolpact codegen --out src/generated --caller plugin.json ../todo/plugin.json && tsc",
    );
    const validate = await runMain(["validate", "plugin.json"], { cwd: dir });
    expect(validate.stdout.trim()).toBe("ok plugin.json: com.example.assistant@0.1.0, 0 tools");
    const manifest = readFileSync(path.join(dir, "plugin.json"), "utf8");
    expect(manifest).toContain('"uses": ["com.example.todo:*"]');
    expect(readFileSync(path.join(dir, "src/add-and-list.ts"), "utf8")).toContain("tools.todo.addItem.preview(input)");
    expect(readFileSync(path.join(dir, "src/add-and-list.test.ts"), "utf8")).toContain('manifest: "../todo/plugin.json"');
  });

  it("says what a caller needs: --provider, naming a provider with the scaffold's tools", async () => {
    const missing = await runMain(["init", "caller-a", "--caller"], { cwd: work });
    expect([missing.code, missing.stderr.split("\n")[0]]).toEqual([
      2,
      "toolpact init: a caller calls a provider: name it with --provider <folder or plugin.json>",
    ]);
    const other = path.join(work, "other");
    mkdirSync(other);
    writeFileSync(
      path.join(other, "plugin.json"),
      JSON.stringify({
        id: "com.acme.other",
        version: "1.0.0",
        permissions: ["tools:provide"],
        tools: [{ name: "ping", effect: "read", inputSchema: { type: "object" } }],
      }),
    );
    const run = await runMain(["init", "caller-b", "--caller", "--provider", "other"], { cwd: work });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      "toolpact init: com.acme.other does not declare add-item and list-items: the caller's code calls the tools of the provider `toolpact init` scaffolds; " +
        "point --provider at one, then change the calls to your own tools",
    );
    expect(existsSync(path.join(work, "caller-b"))).toBe(false);
  });

  it("refuses an id that is not a plugin id (usage error)", async () => {
    const run = await runMain(["init", "x", "--id", "Com.Example"], { cwd: work });
    expect(run.code).toBe(2);
    expect(run.stderr.split("\n")[0]).toMatch(/^toolpact init: --id "Com\.Example" is not a plugin id/);
  });
});
