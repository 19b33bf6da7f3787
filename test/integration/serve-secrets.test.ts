/**
 * Secrets a real `toolpact serve` keeps from its plugins: a plugin that reads /proc/self/environ and
 * /proc/self/cmdline (and its parent's) finds none of them, whether they came in the environment (the
 * server re-executes itself and receives them over a pipe) or from files (`TOOLPACT_<NAME>_FILE`). A
 * missing or unreadable file stops start-up, naming it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI_BIN, requireBuiltCli } from "./support/serve-process.js";

requireBuiltCli();
const LINUX = process.platform === "linux";

let dir: string;
const children: ChildProcess[] = [];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-secrets-"));
});

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

const b64 = () => randomBytes(32).toString("base64");

function secrets(): Record<string, string> {
  return {
    TOOLPACT_ADMIN_KEY: randomBytes(32).toString("base64url"),
    TOOLPACT_ACTOR_SECRET: b64(),
    TOOLPACT_SIGNING_KEYS: `k1:${b64()}`,
    TOOLPACT_STORAGE_KEY: b64(),
  };
}

/**
 * A plugin whose activate looks for the secret values everywhere a process can read its environment
 * back, and writes down only where it found one (never the values).
 */
function writeSnoopingPlugin(values: readonly string[]): void {
  const folder = path.join(dir, "plugins", "snoop");
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    path.join(folder, "plugin.json"),
    JSON.stringify({
      id: "com.example.snoop",
      version: "1.0.0",
      permissions: ["tools:provide"],
      tools: [{ name: "echo", effect: "read", inputSchema: { type: "object" } }],
    }),
  );
  writeFileSync(path.join(folder, "package.json"), JSON.stringify({ type: "module", main: "./main.js" }));
  writeFileSync(
    path.join(folder, "main.js"),
    `import { readFileSync, writeFileSync } from "node:fs";
const secrets = ${JSON.stringify(values)};
export function activate(sdk) {
  const places = {
    "/proc/self/environ": () => readFileSync("/proc/self/environ", "latin1"),
    "/proc/self/cmdline": () => readFileSync("/proc/self/cmdline", "latin1"),
    "/proc/<parent>/environ": () => readFileSync("/proc/" + process.ppid + "/environ", "latin1"),
    "/proc/<parent>/cmdline": () => readFileSync("/proc/" + process.ppid + "/cmdline", "latin1"),
    "process.env": () => JSON.stringify(process.env),
  };
  const found = {};
  for (const [place, read] of Object.entries(places)) {
    let text = "";
    try { text = read(); } catch (error) { text = ""; found[place] = "unreadable: " + error.code; continue; }
    found[place] = secrets.filter((secret) => text.includes(secret)).length;
  }
  found.toolpactVariables = Object.keys(process.env).filter((name) => name.startsWith("TOOLPACT_"));
  writeFileSync(new URL("./found.json", import.meta.url), JSON.stringify(found));
  sdk.tools.provide("echo", { execute: (input) => input });
}
`,
  );
  writeFileSync(path.join(dir, "toolpact.config.json"), JSON.stringify({ actorIssuer: "https://id.example", port: 0, plugins: ["./plugins/snoop"] }));
}

function serve(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [CLI_BIN, "serve"], { cwd: dir, env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  return child;
}

/** Resolves with the URL once serving, or rejects with the output when it exits first. */
function serving(child: ChildProcess): Promise<{ url: string; output: () => string; exited: Promise<number | null> }> {
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not serving within 20 s: ${output}`)), 20_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /serving .* at (http:\/\/\S+)\/trpc/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1]!, output: () => output, exited });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before serving: ${output}`));
    });
  });
}

function found(): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(dir, "plugins", "snoop", "found.json"), "utf8")) as Record<string, unknown>;
}

describe.skipIf(!LINUX)("secrets and in-process plugins in a real toolpact serve", () => {
  it("from the environment: the server re-executes itself, and no /proc file or process.env shows a secret", async () => {
    const env = secrets();
    writeSnoopingPlugin(Object.values(env));
    const child = serve({ ...env, TOOLPACT_VISIBLE: "yes" });
    const { url, exited } = await serving(child);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(found()).toEqual({
      "/proc/self/environ": 0,
      "/proc/self/cmdline": 0,
      "/proc/<parent>/environ": 0,
      "/proc/<parent>/cmdline": 0,
      "process.env": 0,
      toolpactVariables: ["TOOLPACT_VISIBLE"],
    });
    // The first process (the one started) forwards a signal and reports the server's exit.
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("a supervisor killed outright takes its server with it", async () => {
    writeSnoopingPlugin([]);
    const child = serve(secrets());
    const { url, exited } = await serving(child);
    child.kill("SIGKILL");
    await exited;
    const deadline = Date.now() + 5_000;
    let answering = true;
    while (answering && Date.now() < deadline) {
      answering = await fetch(`${url}/healthz`).then(
        () => true,
        () => false,
      );
      if (answering) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(answering).toBe(false);
  });

  it("from files (TOOLPACT_<NAME>_FILE): served, and neither the values nor the paths reach a plugin", async () => {
    const env = secrets();
    const files: Record<string, string> = {};
    for (const [name, value] of Object.entries(env)) {
      const file = path.join(dir, `${name.toLowerCase()}.secret`);
      writeFileSync(file, `${value}\n`, { mode: 0o600 });
      files[`${name}_FILE`] = file;
    }
    writeSnoopingPlugin(Object.values(env));
    const child = serve(files);
    const { url, exited } = await serving(child);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(found()).toMatchObject({ "/proc/self/environ": 0, "process.env": 0, toolpactVariables: [] });
    child.kill("SIGINT");
    expect(await exited).toBe(0);
  });

  it("a missing or unreadable secret file, or a secret set twice, stops start-up naming it", async () => {
    writeSnoopingPlugin([]);
    const env = secrets();
    const cases: [Record<string, string>, RegExp][] = [
      [
        { ...env, TOOLPACT_STORAGE_KEY: "", TOOLPACT_STORAGE_KEY_FILE: path.join(dir, "missing.secret") },
        /TOOLPACT_STORAGE_KEY_FILE names .*missing\.secret, which cannot be read \(ENOENT\)/,
      ],
      [{ ...env, TOOLPACT_ADMIN_KEY: "", TOOLPACT_ADMIN_KEY_FILE: dir }, /TOOLPACT_ADMIN_KEY_FILE names .*, which cannot be read \(EISDIR\)/],
      [{ ...env, TOOLPACT_ACTOR_SECRET_FILE: path.join(dir, "toolpact.config.json") }, /both TOOLPACT_ACTOR_SECRET and TOOLPACT_ACTOR_SECRET_FILE are set/],
    ];
    for (const [caseEnv, message] of cases) {
      const child = serve(caseEnv);
      let stderr = "";
      child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on("exit", (exit) => resolve(exit)));
      expect(code, stderr).toBe(1);
      expect(stderr).toMatch(message);
      for (const value of Object.values(env)) expect(stderr).not.toContain(value);
    }
  });
});
