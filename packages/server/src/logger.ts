import type { Logger } from "@toolpact/runtime";

// One Logger for the runtime and the server: its home is @toolpact/runtime.
export { silentLogger, type Logger } from "@toolpact/runtime";

/** One JSON line per entry on stderr, with level and time. */
export const jsonLineLogger: Logger = {
  info: (entry) => writeLine("info", entry),
  warn: (entry) => writeLine("warn", entry),
  error: (entry) => writeLine("error", entry),
};

function writeLine(level: string, entry: Readonly<Record<string, unknown>>): void {
  process.stderr.write(JSON.stringify({ level, at: new Date().toISOString(), ...entry }) + "\n");
}
