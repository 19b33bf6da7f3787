import type { CliIo } from "./io.js";
import { terminalText } from "./terminal-text.js";

/** A `toolpact` subcommand: takes its arguments, returns the exit code (0 ok, 1 failed, 2 usage). */
type Command = (args: readonly string[], io: CliIo) => Promise<number>;

/** A registered command. `requires` names an optional peer package it loads, checked before `load`. */
interface CommandEntry {
  readonly summary: string;
  readonly requires?: string;
  readonly load: () => Promise<Command>;
}

/** The package behind `dev`, `serve`, `migrate` and `mcp`: an optional peer of the CLI, so a caller's install stays light. */
const SERVER_PACKAGE = "@toolpact/server";

const COMMANDS: Record<string, CommandEntry> = {
  init: {
    summary: "init [dir] [--caller]               scaffold a provider (or caller) plugin project with a passing test",
    load: async () => (await import("./commands/init.js")).run,
  },
  validate: {
    summary: "validate <manifest...>              check plugin manifests; every problem as file:line:col",
    load: async () => (await import("./commands/validate.js")).run,
  },
  codegen: {
    summary: "codegen --out <dir> <manifest...>   generate typed clients (--check: fail on stale files; --watch)",
    load: async () => (await import("./commands/codegen.js")).run,
  },
  diff: {
    summary: "diff <old-manifest> <new-manifest>  list breaking changes; exit 1 when one lacks a version bump",
    load: async () => (await import("./commands/diff.js")).run,
  },
  import: {
    summary: "import mcp --id <id> --out <dir>    write plugin.json from an MCP server's tools (-- <command> or --url), for review",
    load: async () => (await import("./commands/import.js")).run,
  },
  dev: {
    summary: "dev [folder...]                     serve plugins with throwaway secrets, keys and a token; reload on change",
    requires: SERVER_PACKAGE,
    load: async () => (await import("./commands/dev.js")).run,
  },
  policy: {
    summary: "policy test|replay <policy> ...     try a tenant policy on cases (exit 1 on a mismatch) or on recorded calls",
    requires: SERVER_PACKAGE,
    load: async () => (await import("./commands/policy.js")).run,
  },
  token: {
    summary: "token --user <id> [--presence]      mint an actor or presence token from the configured secret",
    load: async () => (await import("./commands/token.js")).run,
  },
  serve: {
    summary: "serve [--config file] [--dev]       run the runtime over HTTP (toolpact.config.json)",
    requires: SERVER_PACKAGE,
    load: async () => (await import("./commands/serve.js")).run,
  },
  mcp: {
    summary: "mcp --url <server>                  MCP on stdio for a local agent, forwarding to a toolpact server",
    requires: SERVER_PACKAGE,
    load: async () => (await import("./commands/mcp.js")).run,
  },
  migrate: {
    summary: "migrate [--config file]             apply the store's migrations and exit",
    requires: SERVER_PACKAGE,
    load: async () => (await import("./commands/migrate.js")).run,
  },
  audit: {
    summary: "audit verify|checkpoint|export|key  check the activity log against its signed checkpoints; export it",
    requires: SERVER_PACKAGE,
    load: async () => (await import("./commands/audit.js")).run,
  },
};

export const USAGE = [
  "usage: toolpact <command> [options]",
  "",
  "commands:",
  ...Object.values(COMMANDS).map((c) => `  ${c.summary}`),
  "",
  "Run `toolpact <command> --help` for a command's options.",
].join("\n");

/**
 * Runs the `toolpact` CLI in this process: writes through `io`, reads `io.env` and `io.cwd`, and returns
 * the exit code (it never calls process.exit). Every line is printed through terminalText, so no text
 * that came from outside can drive the terminal.
 * @example process.exitCode = await main(process.argv.slice(2), processIo);
 */
export async function main(argv: readonly string[], outerIo: CliIo): Promise<number> {
  const io: CliIo = {
    cwd: outerIo.cwd,
    env: outerIo.env,
    stdout: (line) => outerIo.stdout(terminalText(line)),
    stderr: (line) => outerIo.stderr(terminalText(line)),
  };
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    io.stderr(`toolpact: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  if (command.requires !== undefined && !isInstalled(command.requires)) {
    io.stderr(
      `toolpact ${name} needs ${command.requires}, which this project does not have: ` +
        `npm i -D ${command.requires} (pnpm add -D ${command.requires}), next to @toolpact/cli`,
    );
    return 1;
  }
  return (await command.load())(rest, io);
}

/** Whether `specifier` resolves from the CLI's own location, as the command's `import` would. */
function isInstalled(specifier: string): boolean {
  try {
    import.meta.resolve(specifier);
    return true;
  } catch {
    return false;
  }
}
