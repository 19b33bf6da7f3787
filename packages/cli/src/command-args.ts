import { parseArgs, type ParseArgsConfig } from "node:util";
import type { CliIo } from "./io.js";

/** What `parseCommandArgs` gives back: the parsed options, or the exit code when the command is done. */
export type CommandArgs<TConfig extends ParseArgsConfig> = ReturnType<typeof parseArgs<TConfig>> | number;

/**
 * Parses a command's arguments the same way for every command: a usage error prints the message and
 * the help to stderr (exit 2); `--help` prints the help to stdout (exit 0). `config` must declare `help`.
 */
export function parseCommandArgs<const TConfig extends ParseArgsConfig>(
  command: { readonly name: string; readonly help: string },
  io: CliIo,
  config: TConfig,
): CommandArgs<TConfig> {
  let parsed: ReturnType<typeof parseArgs<TConfig>>;
  try {
    parsed = parseArgs(config);
  } catch (error) {
    io.stderr(`toolpact ${command.name}: ${(error as Error).message}\n\n${command.help}`);
    return 2;
  }
  if ((parsed.values as { help?: boolean }).help === true) {
    io.stdout(command.help);
    return 0;
  }
  return parsed;
}
