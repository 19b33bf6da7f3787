/**
 * Where the server writes structured log entries (`{ event, ...fields }`); the same shape as the
 * runtime's logger, so one sink serves both. Entries never carry inputs, outputs or secrets.
 */
export interface Logger {
  info(entry: Readonly<Record<string, unknown>>): void;
  warn(entry: Readonly<Record<string, unknown>>): void;
  error(entry: Readonly<Record<string, unknown>>): void;
}

/** One JSON line per entry on stderr, with level and time. */
export const jsonLineLogger: Logger = {
  info: (entry) => writeLine("info", entry),
  warn: (entry) => writeLine("warn", entry),
  error: (entry) => writeLine("error", entry),
};

/** Discards everything. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

function writeLine(level: string, entry: Readonly<Record<string, unknown>>): void {
  process.stderr.write(JSON.stringify({ level, at: new Date().toISOString(), ...entry }) + "\n");
}
