import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { main } from "./main.js";

/** The built binary, as users run it. `pnpm test` builds it before the tests run. */
export const BIN = fileURLToPath(new URL("../dist/bin.js", import.meta.url));

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `toolpact ...args` in this process through main(argv, io) and collects what it printed: the
 * fast way for a command's cases (no Node start, no build needed). `env` defaults to a copy of this
 * process's environment, so a command that takes secrets out of it leaves the test's own alone.
 */
export async function runMain(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, {
    cwd: options.cwd ?? process.cwd(),
    env: options.env ?? { ...process.env },
    stdout: (line) => void (stdout += `${line}\n`),
    stderr: (line) => void (stderr += `${line}\n`),
  });
  return { code, stdout, stderr };
}

/**
 * Loads commands' modules (and what they import) ahead of the first in-process case, in a hook with
 * room for it, so that a loaded machine's first transform does not eat a case's own time budget.
 */
export async function preloadCommands(...names: readonly (keyof typeof COMMAND_MODULES)[]): Promise<void> {
  await Promise.all(names.map((name) => COMMAND_MODULES[name]()));
}

/** Each command's module, imported by a literal path (what the test runner's transform can follow). */
const COMMAND_MODULES = {
  codegen: () => import("./commands/codegen.js"),
  diff: () => import("./commands/diff.js"),
  dev: () => import("./commands/dev.js"),
  import: () => import("./commands/import.js"),
  init: () => import("./commands/init.js"),
  mcp: () => import("./commands/mcp.js"),
  migrate: () => import("./commands/migrate.js"),
  policy: () => import("./commands/policy.js"),
  serve: () => import("./commands/serve.js"),
  token: () => import("./commands/token.js"),
  validate: () => import("./commands/validate.js"),
  audit: () => import("./commands/audit.js"),
};

/** Runs `node dist/bin.js ...args` and collects its output: the outside test, as users run it. */
export function runCli(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A long-running `toolpact` command (`dev`), its output so far, and waits on it. */
export interface RunningCli {
  readonly child: ReturnType<typeof spawn>;
  /** stdout and stderr so far, interleaved as written. */
  output(): string;
  /** Resolves with the first match of `pattern` in the output from `from` on (default: all of it). */
  waitFor(pattern: RegExp, options?: { from?: number; timeoutMs?: number }): Promise<RegExpExecArray>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `node dist/bin.js ...args` and keeps it running. */
export function startCli(args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const waiters = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    for (const check of waiters) check();
  };
  child.stdout.on("data", append);
  child.stderr.on("data", append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    output: () => output,
    exited,
    waitFor: (pattern, { from = 0, timeoutMs = 60_000 } = {}) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output.slice(from));
          if (match === null) return;
          cleanup();
          resolve(match);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${output}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        void exited.then(() => {
          check();
          if (waiters.has(check)) {
            cleanup();
            reject(new Error(`exited before ${pattern}; output:\n${output}`));
          }
        });
        check();
      }),
  };
}

/** tRPC's HTTP wire format with plain fetch: a mutation (POST, JSON body) or a query (GET, ?input=). */
export async function trpc(
  url: string,
  path: string,
  input: unknown,
  init: { headers?: Record<string, string>; query?: boolean } = {},
): Promise<{ status: number; data: unknown; error?: { message: string; data: Record<string, unknown> } }> {
  const response = init.query
    ? await fetch(`${url}/trpc/${path}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, { headers: init.headers ?? {} })
    : await fetch(`${url}/trpc/${path}`, { method: "POST", headers: { "content-type": "application/json", ...init.headers }, body: JSON.stringify(input) });
  const body = (await response.json()) as { result?: { data: unknown }; error?: { message: string; data: Record<string, unknown> } };
  return { status: response.status, data: body.result?.data, ...(body.error ? { error: body.error } : {}) };
}

/** Approves a platform confirmation as its user does in the browser: presence token -> session cookie, page -> CSRF token, form POST. */
export async function approveOnPage(confirmUrl: string, presenceToken: string): Promise<number> {
  const { origin, pathname } = new URL(confirmUrl);
  const signIn = await fetch(`${origin}/confirm/session?token=${encodeURIComponent(presenceToken)}`, { redirect: "manual" });
  const cookie = signIn.headers.get("set-cookie")?.split(";")[0];
  if (cookie === undefined) throw new Error(`sign-in failed: HTTP ${signIn.status} ${await signIn.text()}`);
  const page = await fetch(confirmUrl, { headers: { cookie }, redirect: "manual" });
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  if (csrf === undefined) throw new Error(`the confirmation page (HTTP ${page.status}) has no form to approve with`);
  const approved = await fetch(`${origin}${pathname}/approve`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ csrf }).toString(),
    redirect: "manual",
  });
  return approved.status;
}
