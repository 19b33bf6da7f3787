/**
 * Where the runtime and the server write structured log entries (`{ event, ...fields }`): one shape, so
 * one sink serves both. Entries never carry raw input, output, provider messages or secrets.
 */
export interface Logger {
  info(entry: Readonly<Record<string, unknown>>): void;
  warn(entry: Readonly<Record<string, unknown>>): void;
  error(entry: Readonly<Record<string, unknown>>): void;
}

/** Discards everything. */
export const silentLogger: Logger = Object.freeze({ info() {}, warn() {}, error() {} });
