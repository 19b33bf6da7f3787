/**
 * The dev loop as an author meets it (issue 24): the port is checked before anything is built, a failed
 * build keeps every folder that waited on it stale until a build of it passes (and "serving" never
 * stands over a stale build), saves keep being noticed through failures, and the throwaway state goes
 * on every exit that can be seen, or is found stale at the next start.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, runCli, runMain, startCli, type RunningCli, preloadCommands } from "../cli-test-helpers.js";

beforeAll(() => preloadCommands("dev"), 180_000);

const work = mkdtempSync(path.join(tmpdir(), "toolpact-dev-loop-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The environment of a reader's shell: no toolpact secrets, no npm script variables. */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("TOOLPACT_") && !name.startsWith("npm_")));
const PROVIDER = "com.example.todo";
const CALLER = "com.example.assistant";

function manifest(description: string): string {
  const object = { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false };
  return JSON.stringify(
    { id: PROVIDER, version: "1.0.0", permissions: ["tools:provide"], tools: [{ name: "add-item", description, effect: "write", inputSchema: object }] },
    null,
    2,
  );
}

/** Saves as many editors do: a new copy renamed over the file (the save Node 20's recursive watcher loses after the first). */
function save(file: string, text: string): void {
  writeFileSync(`${file}.swp`, text);
  renameSync(`${file}.swp`, file);
}

/**
 * A provider and a caller whose builds are fast and can be broken: each regenerates its clients with
 * the real binary, then `node --check`s one source file under src/.
 */
function writeProject(root: string, options: { builds: boolean }): { provider: string; caller: string } {
  const provider = path.join(root, "todo");
  const caller = path.join(root, "assistant");
  mkdirSync(path.join(provider, "src"), { recursive: true });
  mkdirSync(path.join(caller, "src"), { recursive: true });
  writeFileSync(path.join(provider, "plugin.json"), manifest("Add an item."));
  writeFileSync(path.join(caller, "plugin.json"), JSON.stringify({ id: CALLER, version: "1.0.0", permissions: ["tools:call"], uses: [`${PROVIDER}:*`] }));
  const node = (args: string) => `node ${JSON.stringify(BIN)} ${args}`;
  const scripts = (build: string) => (options.builds ? { scripts: { build } } : {});
  writeFileSync(
    path.join(provider, "package.json"),
    JSON.stringify({
      name: "todo",
      type: "module",
      main: "index.js",
      ...scripts(`${node("codegen --out src/generated plugin.json")} && node --check src/check.js`),
    }),
  );
  writeFileSync(
    path.join(caller, "package.json"),
    JSON.stringify({
      name: "assistant",
      type: "module",
      ...scripts(`${node("codegen --out src/generated --caller plugin.json ../todo/plugin.json")} && node --check src/main.js`),
    }),
  );
  writeFileSync(path.join(provider, "index.js"), 'export function activate(sdk) {\n  sdk.tools.provide("add-item", { execute: () => ({}) });\n}\n');
  writeFileSync(path.join(provider, "src/check.js"), "export const ok = 1;\n");
  writeFileSync(path.join(caller, "src/main.js"), "export const ok = 1;\n");
  return { provider, caller };
}

/** Waits for `pattern` in what dev printed after `from`, and returns where that output ends now. */
async function next(dev: RunningCli, pattern: RegExp, from: number): Promise<number> {
  await dev.waitFor(pattern, { from, timeoutMs: 90_000 });
  return dev.output().length;
}

describe("toolpact dev: the port, before anything is built (in process)", () => {
  let holder: Server;
  let taken: number;
  let root: string;
  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    taken = (holder.address() as { port: number }).port;
    root = path.join(work, "port");
    writeProject(root, { builds: true });
  });
  afterAll(() => new Promise((resolve) => holder.close(resolve)));

  it("honours the config's port when folders are named, and reports it taken at once, naming where it came from", async () => {
    writeFileSync(path.join(root, "toolpact.config.json"), JSON.stringify({ plugins: ["todo"], port: taken }));
    const run = await runMain(["dev", "todo", "assistant"], { cwd: root, env });
    expect([run.code, run.stdout, run.stderr.trim()]).toEqual([
      1,
      "",
      `toolpact dev: cannot listen on 127.0.0.1:${taken} ("port" in toolpact.config.json): the port is in use (another toolpact dev or server?): ` +
        'stop what holds it, or choose another port with --port <n> or "port" in toolpact.config.json (--port 0 picks a free one)',
    ]);
    expect(existsSync(path.join(root, "todo/src/generated")), "nothing was built").toBe(false);
    expect(existsSync(path.join(root, ".toolpact/dev")), "no state was made").toBe(false);
    const flag = await runMain(["dev", "todo", "--port", String(taken)], { cwd: root, env });
    expect(flag.stderr).toContain(`cannot listen on 127.0.0.1:${taken} (--port): the port is in use`);
  });

  it("warns when it would listen beyond this machine", async () => {
    const run = await runMain(["dev", "todo", "--host", "192.0.2.1", "--port", "0"], { cwd: root, env });
    expect(run.code).toBe(1);
    expect(run.stderr.split("\n").slice(0, 2)).toEqual([
      "toolpact dev: warning: listening on 192.0.2.1, which is not this machine's loopback address: other machines that reach it can use its " +
        "confirmation page and anyone holding the printed keys can call your plugins; use --host 127.0.0.1 unless you mean to share it",
      'toolpact dev: cannot listen on 192.0.2.1:0 (--port): that address is not one of this machine\'s: stop what holds it, or choose another port with --port <n> or "port" in toolpact.config.json (--port 0 picks a free one)',
    ]);
  });
});

describe("toolpact dev: rebuilds after a failure and keeps watching (the real binary)", () => {
  let dev: RunningCli;
  let root: string;
  let provider: string;
  let caller: string;
  beforeAll(async () => {
    root = path.join(work, "loop");
    ({ provider, caller } = writeProject(root, { builds: true }));
    dev = startCli(["dev", "todo", "assistant", "--port", "0"], { cwd: root, env });
    const [, port] = (await dev.waitFor(/^toolpact dev: port 0 \(--port\) picked the free port (\d+)$/m))!;
    await dev.waitFor(new RegExp(`^toolpact dev: serving 2 plugins at http://127\\.0\\.0\\.1:${port}$`, "m"), { timeoutMs: 90_000 });
  }, 120_000);
  afterAll(async () => {
    dev.child.kill("SIGINT");
    await dev.exited;
  });

  it("refuses a second toolpact dev in the same folder while the first runs", async () => {
    const second = await runMain(["dev", "todo", "--port", "0"], { cwd: root, env });
    expect([second.code, second.stderr.trim()]).toEqual([
      1,
      `toolpact dev: another toolpact dev (pid ${dev.child.pid}) is running in this folder (.toolpact/dev): stop it first (Ctrl-C in its terminal), or start this one from another folder`,
    ]);
  });

  it("a manifest change that breaks the provider's build rebuilds the caller too once the provider is fixed, and serves only then", async () => {
    let at = dev.output().length;
    save(path.join(provider, "src/check.js"), "export const = broken;\n");
    at = await next(dev, /^toolpact dev: not serving until this build passes$/m, at);
    const broken = at;
    save(path.join(provider, "plugin.json"), manifest("Add an item to the shared list."));
    at = await next(dev, /^toolpact dev: not serving until these builds pass: todo, assistant$/m, at);
    expect(dev.output().slice(broken)).not.toMatch(/built assistant|toolpact dev: serving/);

    save(path.join(provider, "src/check.js"), "export const ok = 2;\n");
    await dev.waitFor(/^toolpact dev: serving 2 plugins at /m, { from: at, timeoutMs: 90_000 });
    const cycle = dev.output().slice(at);
    expect(cycle).toMatch(/^toolpact dev: todo\/src\/check\.js changed: rebuilding and restarting \(also assistant, not built since a build failed\)$/m);
    expect(cycle.indexOf("built todo")).toBeGreaterThan(-1);
    expect(cycle.indexOf("built assistant"), "the caller is built before anything serves").toBeGreaterThan(cycle.indexOf("built todo"));
    expect(cycle.indexOf("built assistant")).toBeLessThan(cycle.indexOf("serving 2 plugins"));
    expect(readFileSync(path.join(caller, "src/generated/todo.ts"), "utf8")).toContain("Add an item to the shared list.");
  }, 300_000);

  it.each([
    ["todo", "src/check.js"],
    ["assistant", "src/main.js"],
  ])(
    "in %s, notices a save, a break, the fix and a save again",
    async (folder, file) => {
      const source = path.join(root, folder, file);
      let at = dev.output().length;
      for (const [text, outcome] of [
        ["export const saved = 1;\n", "serving"],
        ["export const = broken;\n", "failed"],
        ["export const fixed = 1;\n", "serving"],
        ["export const savedAgain = 1;\n", "serving"],
      ] as const) {
        save(source, text);
        at = await next(dev, new RegExp(`^toolpact dev: ${folder}/${file.replace(".", "\\.")} changed: rebuilding and restarting$`, "m"), at);
        at = await next(
          dev,
          outcome === "serving" ? /^toolpact dev: serving 2 plugins at /m : new RegExp(`^toolpact dev: npm run build in ${folder} failed`, "m"),
          at,
        );
        // Quiet time: the next save is its own change.
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    },
    300_000,
  );
});

describe("toolpact dev: its throwaway state (the real binary)", () => {
  it("owner-only dev.env even when one existed; SIGKILL leaves state that `token` refuses and the next start replaces; SIGHUP cleans up", async () => {
    const root = path.join(work, "state");
    const { caller } = writeProject(root, { builds: false });
    const envFile = path.join(caller, ".toolpact/dev.env");
    mkdirSync(path.dirname(envFile), { recursive: true });
    writeFileSync(envFile, "TOOLPACT_URL=old\n");
    chmodSync(envFile, 0o644);

    const first = startCli(["dev", "todo", "assistant", "--port", "0"], { cwd: root, env });
    await first.waitFor(/^toolpact dev: serving 2 plugins at /m, { timeoutMs: 90_000 });
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(envFile, "utf8")).toMatch(/^TOOLPACT_URL=http:/);
    expect((await runCli(["token", "--user", "ada"], { cwd: root, env })).code).toBe(0);

    first.child.kill("SIGKILL");
    await first.exited;
    expect(existsSync(path.join(root, ".toolpact/dev/toolpact.config.json")), "a kill cannot be caught: the state stays").toBe(true);
    const stale = await runCli(["token", "--user", "ada"], { cwd: root, env });
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain(
      `toolpact token: the secret in .toolpact/dev/toolpact.config.json is stale: the \`toolpact dev\` that made it (pid ${first.child.pid}) is no longer running`,
    );
    await waitUntil(() => processesNaming(path.join(root, ".toolpact/dev")).length === 0, "the orphaned dev host to stop (its supervisor is gone)");

    const second = startCli(["dev", "todo", "assistant", "--port", "0"], { cwd: root, env });
    await second.waitFor(/^toolpact dev: serving 2 plugins at /m, { timeoutMs: 90_000 });
    expect(second.output()).toContain(`toolpact dev: removing stale state in .toolpact/dev: a toolpact dev (pid ${first.child.pid}) did not stop cleanly\n`);
    expect((await runCli(["token", "--user", "ada"], { cwd: root, env })).code).toBe(0);
    second.child.kill("SIGHUP");
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(second.output()).toMatch(/toolpact dev: SIGHUP: stopping\ntoolpact dev: stopped\n$/);
    expect(existsSync(path.join(root, ".toolpact/dev")), "the secrets and database are gone").toBe(false);
    expect(existsSync(envFile)).toBe(false);
    expect(processesNaming(path.join(root, ".toolpact/dev"))).toEqual([]);
  }, 240_000);
});

async function waitUntil(condition: () => boolean, what: string): Promise<void> {
  for (const start = Date.now(); !condition(); ) {
    if (Date.now() - start > 30_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Command lines of live processes that mention `text`. */
function processesNaming(text: string): string[] {
  try {
    return execFileSync("pgrep", ["-af", text], { encoding: "utf8" }).trim().split("\n").filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}
