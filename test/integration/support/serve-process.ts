/** `toolpact serve` as a separate process: spawned from the built CLI, stopped by signal. */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The built binary; `pnpm exec tsc -b packages/cli` makes it. */
export const CLI_BIN = fileURLToPath(new URL("../../../packages/cli/dist/bin.js", import.meta.url));

/** Throws a clear error when the CLI is not built. */
export function requireBuiltCli(): void {
  if (!existsSync(CLI_BIN)) {
    throw new Error("packages/cli/dist/bin.js is not built: run `pnpm build` (or `pnpm exec tsc -b packages/cli`) before these tests");
  }
}

/** A running `toolpact serve`. */
export interface ServeProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /**
   * The serving process's pid, from its `instance <host>/<pid>/...` line: with secrets in the
   * environment, `toolpact serve` re-executes itself, and `child` is then its supervisor.
   */
  readonly pid: number;
  /** Everything it wrote so far (stdout and stderr). */
  output(): string;
  /** Resolves with the exit code or signal once it has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns `node packages/cli/dist/bin.js serve ...args` (or another `toolpact` binary, `bin`) in `cwd`
 * and waits until it prints its URL.
 */
export function startServe(options: {
  cwd: string;
  args: readonly string[];
  env: Record<string, string>;
  timeoutMs?: number;
  bin?: string;
}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [options.bin ?? CLI_BIN, "serve", ...options.args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? "", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`toolpact serve did not start within ${options.timeoutMs ?? 20_000} ms: ${output}`));
    }, options.timeoutMs ?? 20_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /serving .* at (http:\/\/\S+)\/trpc/.exec(output);
      if (match) {
        clearTimeout(timer);
        const served = /^instance [^\s/]+\/(\d+)\//m.exec(output);
        resolve({ child, url: match[1]!, pid: served === null ? child.pid! : Number(served[1]), output: () => output, exited });
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`toolpact serve exited (${code ?? signal}) before serving: ${output}`));
    });
  });
}

/** Kills a serve process with SIGKILL (no drain, no cleanup) and waits until it is gone. */
export async function killHard(serve: ServeProcess): Promise<void> {
  if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill("SIGKILL");
  await serve.exited;
}

/** The directory a test plugin folder is written to. */
export function pluginDir(root: string, name: string): string {
  return path.join(root, "plugins", name);
}

/** Writes a plugin folder `root/plugins/<name>`: its manifest, a module package.json, and `index.js`; returns its path. */
export function writePluginFolder(root: string, name: string, manifest: object, indexJs: string): string {
  const folder = pluginDir(root, name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, "plugin.json"), JSON.stringify(manifest));
  writeFileSync(path.join(folder, "package.json"), JSON.stringify({ type: "module", main: "./index.js" }));
  writeFileSync(path.join(folder, "index.js"), indexJs);
  return folder;
}
