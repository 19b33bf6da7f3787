/**
 * `sh` blocks without `$ ` prompts are lists of commands to type. They are not run (they install,
 * start servers, or run the whole test suite); each line is checked against what it names instead:
 * a root script or a package script exists, the pnpm version is the one the repository pins, a
 * `toolpact` command exists and knows every flag given, a `node <script>` exists and declares every flag
 * given in its `parseArgs` options, an exported variable is one the host reads.
 */
import { where, type CodeBlock } from "./markdown-blocks.js";

/** What the command checks are made against. */
export interface CommandFacts {
  /** `packageManager` of the root package.json, e.g. `pnpm@10.34.9`. */
  readonly packageManager: string;
  readonly rootScripts: ReadonlySet<string>;
  /** Scripts of each workspace package, by package name. */
  readonly packageScripts: ReadonlyMap<string, ReadonlySet<string>>;
  /** Names of the workspace packages that are published (not private): the ones a reader can install. */
  readonly publishedPackages: ReadonlySet<string>;
  /** The `--help` text of each `toolpact` command, by command name. */
  readonly cliHelp: ReadonlyMap<string, string>;
  /** Environment variables the host and the examples read. */
  readonly knownVariables: ReadonlySet<string>;
  /** The source of a script in the repository (a path relative to its root), or undefined when there is none. */
  readonly readScript: (file: string) => string | undefined;
}

/** Every problem with the commands of a command-list block. */
export function commandListProblems(block: CodeBlock, facts: CommandFacts): string[] {
  const problems: string[] = [];
  block.content
    .replace(/\n$/, "")
    .split("\n")
    .forEach((rawLine, offset) => {
      const line = rawLine.replace(/\s+#\s.*$/, "").trim();
      if (line === "" || line.startsWith("#")) return;
      for (const command of line.split(/\s*&&\s*/)) {
        const problem = commandProblem(command, facts);
        if (problem !== undefined) problems.push(`${where(block, offset)}: ${command}: ${problem}`);
      }
    });
  return problems;
}

function commandProblem(command: string, facts: CommandFacts): string | undefined {
  const words = command.split(/\s+/);
  const [program, ...args] = words;
  switch (program) {
    case "npm":
      return npmProblem(args, facts);
    case "pnpm":
      return pnpmProblem(args, facts);
    case "toolpact":
      return toolpactProblem(args, facts);
    case "export": {
      const name = args[0]?.split("=")[0] ?? "";
      return facts.knownVariables.has(name) ? undefined : `"${name}" is not a variable the host or the examples read`;
    }
    case "node":
      return nodeScriptProblem(args, facts);
    case "openssl":
      return args.join(" ") === "rand -base64 32" ? undefined : "the docs use openssl only as `openssl rand -base64 32`";
    default:
      return 'not a command these docs know how to check: make it a session (lines starting with "$ ") so it runs';
  }
}

/** npm installs either the pinned pnpm, globally, or published packages into the reader's project. */
function npmProblem(args: readonly string[], facts: CommandFacts): string | undefined {
  const pinned = `pnpm@${facts.packageManager.replace(/^pnpm@/, "")}`;
  if (args[0] === "i" && args[1] === "-g" && args[2] === pinned && args.length === 3) return undefined;
  if (args[0] === "install") {
    const names = args.slice(1).filter((arg) => arg !== "-D");
    const unpublished = names.filter((name) => !facts.publishedPackages.has(name));
    if (names.length > 0 && unpublished.length === 0) return undefined;
    if (unpublished.length > 0) return `${unpublished.join(", ")}: not a package this repository publishes`;
  }
  return `npm installs ${pinned} globally (package.json "packageManager") or published packages: npm install [-D] @toolpact/...`;
}

function pnpmProblem(args: readonly string[], facts: CommandFacts): string | undefined {
  const rest = args.filter((arg) => arg !== "--silent");
  if (rest[0] === "install") return rest.length === 1 || (rest.length === 2 && rest[1] === "--frozen-lockfile") ? undefined : "unexpected install options";
  if (rest[0] === "--filter") {
    const scripts = facts.packageScripts.get(rest[1] ?? "");
    if (scripts === undefined) return `no workspace package "${rest[1]}"`;
    return scripts.has(rest[2] ?? "") ? undefined : `package ${rest[1]} has no script "${rest[2]}"`;
  }
  if (rest[0] === "toolpact") return toolpactProblem(rest.slice(1), facts);
  if (rest.join(" ") === "-r publish --access public") return undefined;
  return facts.rootScripts.has(rest[0] ?? "") ? undefined : `the root package.json has no script "${rest[0]}"`;
}

function nodeScriptProblem(args: readonly string[], facts: CommandFacts): string | undefined {
  const [script, ...rest] = args;
  const source = script === undefined || script.startsWith("-") ? undefined : facts.readScript(script);
  if (source === undefined) return `no script "${script}" in the repository`;
  for (const arg of rest) {
    const name = /^--([a-z][a-z-]*)/.exec(arg)?.[1];
    if (name !== undefined && !new RegExp(`["']?\\b${name}["']?\\s*:\\s*\\{\\s*type:`).test(source)) {
      return `${script} declares no --${name} option (parseArgs)`;
    }
  }
  return undefined;
}

function toolpactProblem(args: readonly string[], facts: CommandFacts): string | undefined {
  const [name, ...rest] = args;
  const help = facts.cliHelp.get(name ?? "");
  if (help === undefined) return `toolpact has no command "${name}"`;
  for (const arg of rest) {
    const flag = /^(--?[a-z][a-z-]*)/.exec(arg)?.[1];
    if (flag !== undefined && !new RegExp(`(^|[\\s\\[,|])${flag}(?![a-z-])`).test(help)) {
      return `toolpact ${name} --help does not mention ${flag}`;
    }
  }
  return undefined;
}
