/**
 * `toolpact serve` and `toolpact migrate`: refusals run in process through main(argv, io) with a crafted
 * environment (fast); serving, the secrets' re-execution and a migration also run from the outside, as a
 * separate Node process started with a crafted environment. The outside cases use the built CLI
 * (`pnpm build`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { preloadCommands, runMain } from "../../packages/cli/src/cli-test-helpers.js";

const CLI_DIST = fileURLToPath(new URL("../../packages/cli/dist/", import.meta.url));
if (!existsSync(path.join(CLI_DIST, "commands", "serve.js"))) {
  throw new Error("packages/cli/dist is not built: run `pnpm build` (or `pnpm exec tsc -b packages/cli`) before these tests");
}
/** True once bin.js dispatches `serve` and `migrate` (the lead wires commands into main.ts). */
const BIN_WIRED = /commands\/serve\.js/.test(readFileSync(path.join(CLI_DIST, "main.js"), "utf8"));

/**
 * The node arguments that run `toolpact <command> ...args`: the binary once it dispatches the command;
 * until then the command module, started from a launcher file shaped like bin.js.
 */
function commandLine(command: "serve" | "migrate", args: readonly string[]): string[] {
  if (BIN_WIRED) return [path.join(CLI_DIST, "bin.js"), command, ...args];
  const launcher = path.join(dir, `.launch-${command}.mjs`);
  const module = pathToFileURL(path.join(CLI_DIST, "commands", `${command}.js`)).href;
  const io = pathToFileURL(path.join(CLI_DIST, "io.js")).href;
  writeFileSync(
    launcher,
    `const { run } = await import(${JSON.stringify(module)});\nconst { processIo } = await import(${JSON.stringify(io)});\nprocess.exitCode = await run(process.argv.slice(2), processIo);\n`,
  );
  return [launcher, ...args];
}

beforeAll(() => preloadCommands("serve", "migrate"), 180_000);

let dir: string;
const children: ChildProcess[] = [];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-cli-"));
});

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

const b64 = (bytes = 32) => randomBytes(bytes).toString("base64");

function secretsEnv(): Record<string, string> {
  return {
    TOOLPACT_ADMIN_KEY: randomBytes(32).toString("base64url"),
    TOOLPACT_ACTOR_SECRET: b64(),
    TOOLPACT_SIGNING_KEYS: `k1:${b64()}`,
    TOOLPACT_STORAGE_KEY: b64(),
  };
}

function spawnCli(command: "serve" | "migrate", args: readonly string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, commandLine(command, args), {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  return child;
}

interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `toolpact <command> ...args` in this process, in `dir`, with only `env` (and PATH) as its environment. */
function inProcess(command: "serve" | "migrate", args: readonly string[], env: Record<string, string>): Promise<Finished> {
  return runMain([command, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? "", ...env } });
}

function finished(child: ChildProcess, timeoutMs = 20_000): Promise<Finished> {
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no exit within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`)), timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Waits until the server prints its URL. */
function serving(child: ChildProcess): Promise<{ url: string; output: () => string }> {
  let output = "";
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not serving within 20 s: ${output}`)), 20_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /serving .* at (http:\/\/\S+)\/trpc/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1]!, output: () => output });
      }
    });
    child.on("exit", (code) => reject(new Error(`exited with ${code} before serving: ${output}`)));
  });
}

function writeConfig(config: Record<string, unknown>): void {
  writeFileSync(path.join(dir, "toolpact.config.json"), JSON.stringify({ actorIssuer: "https://id.example", port: 0, ...config }));
}

/** A plugin folder whose activate writes down which TOOLPACT_* variables it can see. */
function writePlugin(name: string, manifest: Record<string, unknown>): string {
  const folder = path.join(dir, "plugins", name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, "plugin.json"), JSON.stringify(manifest, null, 2));
  writeFileSync(path.join(folder, "package.json"), JSON.stringify({ type: "module", exports: { ".": { import: "./dist/index.js" } } }));
  mkdirSync(path.join(folder, "dist"));
  writeFileSync(
    path.join(folder, "dist", "index.js"),
    `import { writeFileSync } from "node:fs";
export function activate(sdk) {
  writeFileSync(new URL("../seen-env.json", import.meta.url), JSON.stringify(Object.keys(process.env).filter((k) => k.startsWith("TOOLPACT_"))));
  sdk.tools.provide("echo", { execute: (input) => input });
}
`,
  );
  return `./plugins/${name}`;
}

const echoManifest = {
  id: "com.example.echo",
  version: "1.0.0",
  permissions: ["tools:provide"],
  tools: [{ name: "echo", effect: "read", inputSchema: { type: "object" } }],
};

describe(`toolpact serve (${BIN_WIRED ? "bin.js" : "command module; bin.js does not dispatch serve yet"})`, () => {
  it("refuses to start without each secret, naming the missing one (in process)", async () => {
    writeConfig({});
    for (const name of ["TOOLPACT_ADMIN_KEY", "TOOLPACT_SIGNING_KEYS", "TOOLPACT_STORAGE_KEY", "TOOLPACT_ACTOR_SECRET"]) {
      const env = secretsEnv();
      delete (env as Record<string, string | undefined>)[name];
      const result = await inProcess("serve", [], env);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain(name);
      expect(result.stdout).not.toMatch(/serving/);
    }
  });

  it("refuses a key shorter than 32 bytes and a key equal to another secret (in process)", async () => {
    writeConfig({});
    const short = await inProcess("serve", [], { ...secretsEnv(), TOOLPACT_SIGNING_KEYS: `k1:${b64(16)}` });
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/signing key "k1" is too short/);
    const shortStorage = await inProcess("serve", [], { ...secretsEnv(), TOOLPACT_STORAGE_KEY: b64(24) });
    expect(shortStorage.code).toBe(1);
    expect(shortStorage.stderr).toMatch(/TOOLPACT_STORAGE_KEY/);
    const shared = b64();
    const reused = await inProcess("serve", [], { ...secretsEnv(), TOOLPACT_ACTOR_SECRET: shared, TOOLPACT_SIGNING_KEYS: `k1:${shared}` });
    expect(reused.code).toBe(1);
    expect(reused.stderr).toMatch(/same secret/);
    expect(reused.stderr).not.toContain(shared);
  });

  it("refuses an invalid manifest with file:line:col, and an unreachable PostgreSQL database without showing its password (in process)", async () => {
    writeConfig({ plugins: [writePlugin("bad", { ...echoManifest, tools: [{ name: "echo", effect: "read", inputSchema: { type: "strnig" } }] })] });
    const invalid = await inProcess("serve", [], secretsEnv());
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/plugin\.json:\d+:\d+/);
    expect(invalid.stderr).toMatch(/strnig/);
    // Port 1 on 127.0.0.1: nothing listens, the connection is refused at once.
    writeConfig({ database: "postgres://app:hunter2-secret@127.0.0.1:1/toolpact" });
    const postgres = await inProcess("serve", [], secretsEnv());
    expect(postgres.code).toBe(1);
    expect(postgres.stderr).toMatch(/the database \(PostgreSQL postgres:\/\/app@127\.0\.0\.1:1\/toolpact\) could not be opened: .*unreachable/);
    expect(postgres.stderr).not.toContain("hunter2-secret");
  });

  it("serves with the plugin activated after the secrets left process.env, and stops cleanly on SIGTERM", async () => {
    writeConfig({ plugins: [writePlugin("echo", echoManifest)] });
    const child = spawnCli("serve", [], { ...secretsEnv(), TOOLPACT_VISIBLE: "yes" });
    const exit = finished(child);
    const { url } = await serving(child);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(JSON.parse(readFileSync(path.join(dir, "plugins", "echo", "seen-env.json"), "utf8"))).toEqual(["TOOLPACT_VISIBLE"]);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect(existsSync(path.join(dir, ".toolpact", "toolpact.db"))).toBe(true);
    child.kill("SIGTERM");
    const result = await exit;
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/stopped/);
  });

  it("--dev generates throwaway secrets, prints them, and starts without a config file", async () => {
    const child = spawnCli("serve", ["--dev", "--port", "0"], {});
    const exit = finished(child);
    const { url, output } = await serving(child);
    expect(output()).toMatch(/TOOLPACT_ADMIN_KEY=\S{40,}/);
    expect(output()).toMatch(/TOOLPACT_SIGNING_KEYS=dev:\S+/);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    child.kill("SIGINT");
    expect((await exit).code).toBe(0);
  });

  it("rejects a bad --port as a usage error (in process)", async () => {
    const result = await inProcess("serve", ["--port", "http"], secretsEnv());
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--port/);
  });
});

describe("toolpact migrate", () => {
  it("creates and migrates the database named by --database, needing no secrets (the binary, then in process)", async () => {
    const result = await finished(spawnCli("migrate", ["--database", "./data/app.db"], {}));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/latest schema/);
    expect(existsSync(path.join(dir, "data", "app.db"))).toBe(true);
    const again = await inProcess("migrate", ["--database", "./data/app.db"], {});
    expect(again.code).toBe(0);
  });

  it("fails on an unreachable PostgreSQL URL, naming it without the password (in process)", async () => {
    const result = await inProcess("migrate", ["--database", "postgres://app:hunter2-secret@127.0.0.1:1/toolpact"], {});
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/PostgreSQL postgres:\/\/app@127\.0\.0\.1:1\/toolpact could not be migrated: .*unreachable/);
    expect(result.stderr).not.toContain("hunter2-secret");
  });
});
