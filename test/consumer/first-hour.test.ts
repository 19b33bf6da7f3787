/**
 * docs/getting-started.md, run as a reader runs it: from an empty folder, with npm, against the packed
 * packages (served under their own names by a local registry; everything else from the real one). Its
 * `sh first-hour` sessions run in order in one "terminal" (the working directory carries over); a
 * `first-hour=background` session is a second terminal, left running (`toolpact dev`) until the end,
 * when it gets Ctrl-C; a `first-hour=approve` session waits for the user: headless Chromium opens the
 * confirmation link `toolpact dev` printed and clicks Approve. Every session's output must match what
 * the page shows (`…` as in the other docs), and every `first-hour-file=<path>` block must be that file
 * as the reader's commands left it. Prints each step's time.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeBlocks, where } from "../../examples/docs-check/src/markdown-blocks.js";
import { outputMatches, sessionCommands, type SessionCommand } from "../../examples/docs-check/src/shell-session.js";
import { CHROMIUM, launchChromium } from "./support/chromium.js";
import { shellEnv } from "./support/consumer-project.js";
import { localSqlitePrebuild, startLocalRegistry, writeNpmUserConfig, type LocalRegistry } from "./support/local-registry.js";
import { packWorkspace, unpack, type PackedPackage } from "./support/workspace-packs.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const DOC = "docs/getting-started.md";
const blocks = codeBlocks(DOC, readFileSync(path.join(repoRoot, DOC), "utf8"));
const steps = blocks.filter((block) => block.lang === "sh" && "first-hour" in block.attributes);
const shownFiles = blocks.filter((block) => typeof block.attributes["first-hour-file"] === "string");
/** The port the page shows `toolpact dev` on; the run uses a free one and reads the page with it. */
const SHOWN_PORT = "4400";
const MINUTE = 60_000;

let work: string;
let registry: LocalRegistry;
let env: Record<string, string>;

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), "toolpact-first-hour-"));
  const packed: PackedPackage[] = packWorkspace(repoRoot, path.join(work, "tarballs"));
  const unpacked = new Map(packed.map((pkg) => [pkg.name, unpack(pkg.tarball, path.join(work, "unpacked", pkg.name))]));
  registry = await startLocalRegistry(packed, unpacked);
  const npmrc = path.join(work, "npmrc");
  writeNpmUserConfig(npmrc, registry.url, existsSync(path.join(repoRoot, ".npmrc")) ? readFileSync(path.join(repoRoot, ".npmrc"), "utf8") : "");
  // prebuild-install finds its settings in a .prebuild-installrc of any folder above the one it installs in.
  const prebuild = localSqlitePrebuild(repoRoot, path.join(work, "prebuilds"));
  writeFileSync(path.join(work, ".prebuild-installrc"), `local-prebuilds=${prebuild.dir}\n`);
  env = {
    ...shellEnv(),
    NO_COLOR: "1",
    npm_config_userconfig: npmrc,
    npm_config_update_notifier: "false",
  };
  mkdirSync(path.join(work, "reader"));
}, 3 * MINUTE);

afterAll(async () => {
  await registry?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("docs/getting-started.md from an empty folder, with the packed packages", () => {
  it("has the steps this test runs", () => {
    expect(steps.length).toBeGreaterThan(4);
    expect(steps.filter((block) => block.attributes["first-hour"] === "background")).toHaveLength(1);
    expect(steps.filter((block) => block.attributes["first-hour"] === "approve")).toHaveLength(1);
  });

  it(
    "every step prints what the page shows, the write is approved in Chromium, and the files are as shown",
    async (context) => {
      if (!existsSync(CHROMIUM)) {
        if (process.env.CI === "true") throw new Error(`${CHROMIUM} is missing: install Debian's chromium`);
        context.skip("skipped: /usr/bin/chromium is missing");
      }
      const root = path.join(work, "reader");
      const port = String(await freePort());
      const timings: string[] = [];
      const problems: string[] = [];
      let cwd = root;
      let background: Running | undefined;
      try {
        for (const block of steps) {
          const mode = block.attributes["first-hour"];
          for (const command of sessionCommands(block)) {
            const shown = command.command;
            const started = performance.now();
            if (mode === "background") {
              background = startCommand(`${shown} --port ${port}`, root, env);
              await background.waitFor(/^toolpact dev: serving \d+ plugins? at /m, 4 * MINUTE);
              timings.push(`${seconds(started)}  (terminal 2) $ ${shown}: serving`);
              continue;
            }
            if (mode === "approve") {
              const from = background!.output().length;
              const waiting = startCommand(shown, cwd, env);
              const [, link] = await background!.waitFor(/^confirm \S+ for user "[^"]+": open (\S+)$/m, MINUTE, from);
              await approveInChromium(link!);
              timings.push(`${seconds(started)}  $ ${shown}  (approved in Chromium)`);
              const run = await waiting.finished(MINUTE);
              check(problems, command, run.output, port);
              if (run.code !== 0) problems.push(`${where(command.block, command.offset)}: $ ${shown} exited ${run.code}`);
              continue;
            }
            const run = await runInShell(shown, cwd, env, 6 * MINUTE);
            timings.push(`${seconds(started)}  $ ${shown}`);
            cwd = run.cwd;
            check(problems, command, run.output, port);
            if (run.code !== 0) problems.push(`${where(command.block, command.offset)}: $ ${shown} exited ${run.code}:\n${run.output}`);
          }
        }
      } finally {
        if (background !== undefined) {
          const started = performance.now();
          background.interrupt();
          await background.finished(MINUTE);
          timings.push(`${seconds(started)}  (terminal 2) Ctrl-C`);
          const devBlock = steps.find((block) => block.attributes["first-hour"] === "background")!;
          check(problems, sessionCommands(devBlock)[0]!, background.output(), port);
        }
        console.log(["docs/getting-started.md, step by step:", ...timings.map((line) => `  ${line}`)].join("\n"));
      }
      for (const block of shownFiles) {
        const file = path.join(root, block.attributes["first-hour-file"] as string);
        if (!existsSync(file)) problems.push(`${where(block)}: ${block.attributes["first-hour-file"] as string} was not written`);
        else if (readFileSync(file, "utf8") !== block.content)
          problems.push(
            `${where(block)}: differs from the ${block.attributes["first-hour-file"] as string} the commands wrote:\n${readFileSync(file, "utf8")}`,
          );
      }
      expect(problems.join("\n\n")).toBe("");
    },
    30 * MINUTE,
  );
});

/** Adds a problem when `output` is not what the page shows for `command` (its port read as the run's). */
function check(problems: string[], command: SessionCommand, output: string, port: string): void {
  const actual = output
    .replace(/\n$/, "")
    .split("\n")
    .filter((line, index, lines) => !(line === "" && index === lines.length - 1));
  const expected = command.expected.map((line) => line.replaceAll(`127.0.0.1:${SHOWN_PORT}`, `127.0.0.1:${port}`));
  if (!outputMatches(expected, output === "" ? [] : actual)) {
    problems.push(
      `${where(command.block, command.offset)}: $ ${command.command}\n  the page shows:\n${indent(command.expected)}\n  it printed:\n${indent(actual)}`,
    );
  }
}

/** Opens the link `toolpact dev` printed, as the reader does, and clicks Approve. */
async function approveInChromium(link: string): Promise<void> {
  const browser = await launchChromium(repoRoot);
  try {
    const page = await browser.newPage();
    await page.goto(link);
    await page.waitForURL(/\/confirm\/[0-9a-f-]{36}$/);
    await page.click("#approve");
    await page.waitForSelector('#status[data-status="approved"]');
  } finally {
    await browser.close();
  }
}

/** One command in bash in `cwd`; reports its output, exit code and the directory it ended in. */
async function runInShell(
  command: string,
  cwd: string,
  environment: Record<string, string>,
  timeoutMs: number,
): Promise<{ output: string; code: number; cwd: string }> {
  const mark = "@@toolpact-first-hour-cwd@@";
  const running = startCommand(`${command}\n__rc=$?\nprintf '\\n${mark}%s\\n' "$PWD"\nexit $__rc`, cwd, environment);
  const { output, code } = await running.finished(timeoutMs);
  const at = output.lastIndexOf(`\n${mark}`);
  if (at < 0) return { output, code, cwd };
  // The directory is the mark's own line; anything printed after it (a child still writing) is output.
  const [ended = "", ...after] = output.slice(at + mark.length + 1).split("\n");
  const late = after.join("\n").trim();
  return { output: late === "" ? output.slice(0, at) : `${output.slice(0, at)}\n${late}`, code, cwd: ended.trim() || cwd };
}

interface Running {
  output(): string;
  waitFor(pattern: RegExp, timeoutMs: number, from?: number): Promise<RegExpExecArray>;
  finished(timeoutMs: number): Promise<{ output: string; code: number }>;
  /** Ctrl-C in its terminal: SIGINT to its whole process group. */
  interrupt(): void;
}

/** Starts `bash -c <script>` in its own process group (as a terminal runs a command), stdout and stderr together. */
function startCommand(script: string, cwd: string, environment: Record<string, string>): Running {
  const child: ChildProcess = spawn("bash", ["--noprofile", "--norc", "-c", script], {
    cwd,
    env: environment,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const exited = new Promise<number>((resolve) => child.once("close", (code, signal) => resolve(code ?? (signal === null ? 1 : 128))));
  const kill = () => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  };
  return {
    output: () => output,
    interrupt: () => process.kill(-child.pid!, "SIGINT"),
    waitFor: async (pattern, timeoutMs, from = 0) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(output.slice(from));
        if (match !== null) return match;
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`\`${script}\` exited before printing ${pattern}:\n${output}`);
        if (Date.now() > deadline) throw new Error(`\`${script}\` did not print ${pattern} within ${timeoutMs} ms:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    finished: async (timeoutMs) => {
      const timer = setTimeout(kill, timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return { output, code };
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function seconds(started: number): string {
  return `${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s`;
}

function indent(lines: readonly string[]): string {
  return lines.length === 0 ? "    (nothing)" : lines.map((line) => `    ${line}`).join("\n");
}
