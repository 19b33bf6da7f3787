/**
 * Shell sessions in the docs: ```` ```sh ```` blocks whose lines start with `$ ` are commands and the
 * lines after each are its output. They are run (one bash per Markdown file, so variables carry from
 * block to block) and the output compared. In expected output, `…` matches any text within a line,
 * and a line that is only `…` matches any number of lines.
 */
import { spawn } from "node:child_process";
import { where, type CodeBlock } from "./markdown-blocks.js";

/** One command of a session and the output the doc shows for it. */
export interface SessionCommand {
  readonly block: CodeBlock;
  /** 0-based line of the command within its block. */
  readonly offset: number;
  /** The command as bash runs it (continuation lines included). */
  readonly command: string;
  readonly expected: readonly string[];
}

/** True when a `sh` block is a session (has `$ ` prompts) rather than a list of commands. */
export function isSession(block: CodeBlock): boolean {
  return block.content.split("\n").some((line) => line.startsWith("$ "));
}

/** The commands of a session block. */
export function sessionCommands(block: CodeBlock): SessionCommand[] {
  const lines = block.content.replace(/\n$/, "").split("\n");
  if (!lines[0]?.startsWith("$ ")) throw new Error(`${where(block)}: a session starts with a "$ " command line`);
  const commands: SessionCommand[] = [];
  for (let index = 0; index < lines.length; ) {
    const offset = index;
    const parts = [lines[index]!.slice(2)];
    while (lines[index]!.endsWith("\\") && index + 1 < lines.length) parts.push(lines[++index]!);
    index++;
    const expected: string[] = [];
    while (index < lines.length && !lines[index]!.startsWith("$ ")) expected.push(lines[index++]!);
    commands.push({ block, offset, command: parts.join("\n"), expected });
  }
  return commands;
}

/** How to run sessions. */
export interface SessionEnvironment {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
}

/** What one command printed (stdout and stderr, interleaved as written) and its exit code. */
export interface CommandRun {
  readonly output: string;
  readonly exitCode: number;
}

const MARK = "@@toolpact-docs";

/** Runs the commands in order in one bash process. */
export async function runCommands(commands: readonly SessionCommand[], environment: SessionEnvironment): Promise<CommandRun[]> {
  const script = [
    "exec 2>&1",
    "__rc=0",
    ...commands.flatMap((command, index) => [
      `printf '${MARK} start ${index}@@\\n'`,
      // `$?` inside the command is the previous command's exit code, as in an interactive shell.
      `(exit $__rc); ${command.command}`,
      "__rc=$?",
      `printf '\\n${MARK} end ${index} %d@@\\n' "$__rc"`,
    ]),
  ].join("\n");
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn("bash", ["--noprofile", "--norc", "-c", script], {
      cwd: environment.cwd,
      env: environment.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let text = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the session timed out after ${environment.timeoutMs} ms; output so far:\n${text}`));
    }, environment.timeoutMs);
    child.once("error", reject);
    child.once("close", () => {
      clearTimeout(timer);
      resolve(text);
    });
  });
  return commands.map((command, index) => {
    const start = output.indexOf(`${MARK} start ${index}@@\n`);
    const endPattern = new RegExp(`\\n${MARK} end ${index} (\\d+)@@\\n`);
    const end = endPattern.exec(output.slice(start));
    if (start < 0 || end === null) {
      throw new Error(`${where(command.block, command.offset)}: the session stopped before "${command.command}" finished; output:\n${output}`);
    }
    const body = output.slice(start + `${MARK} start ${index}@@\n`.length, start + end.index);
    return { output: body.replace(/\n$/, ""), exitCode: Number(end[1]) };
  });
}

/** Whether `actual` output lines match the doc's `expected` lines (with `…` wildcards). */
export function outputMatches(expected: readonly string[], actual: readonly string[]): boolean {
  const patterns = expected.map((line) => (line === "…" ? undefined : lineMatcher(line)));
  const match = (e: number, a: number): boolean => {
    if (e === patterns.length) return a === actual.length;
    const pattern = patterns[e];
    if (pattern === undefined) {
      for (let skip = a; skip <= actual.length; skip++) if (match(e + 1, skip)) return true;
      return false;
    }
    return a < actual.length && pattern.test(actual[a]!) && match(e + 1, a + 1);
  };
  return match(0, 0);
}

function lineMatcher(line: string): RegExp {
  const parts = line.split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*?")}$`);
}

/** Every mismatch of a doc's sessions: output that differs, or a failing command whose exit code the doc does not show. */
export function sessionProblems(commands: readonly SessionCommand[], runs: readonly CommandRun[]): string[] {
  const problems: string[] = [];
  commands.forEach((command, index) => {
    const run = runs[index]!;
    const actual = run.output === "" ? [] : run.output.replace(/\u001b\[[0-9;]*m/g, "").split("\n");
    if (!outputMatches(command.expected, actual)) {
      problems.push(
        `${where(command.block, command.offset)}: $ ${command.command}\n` + `  the doc shows:\n${indent(command.expected)}\n  it printed:\n${indent(actual)}`,
      );
    }
    const next = commands[index + 1];
    const shown = next !== undefined && next.block === command.block && /^echo \$\?$/.test(next.command.trim());
    if (run.exitCode !== 0 && !shown) {
      problems.push(
        `${where(command.block, command.offset)}: $ ${command.command}\n  exits ${run.exitCode}: show it with "$ echo $?" after it, or fix the command`,
      );
    }
  });
  return problems;
}

function indent(lines: readonly string[]): string {
  return lines.length === 0 ? "    (nothing)" : lines.map((line) => `    ${line}`).join("\n");
}
