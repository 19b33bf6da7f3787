/** Telling a database that is not there from one that answered, and saying so to the operator and the caller. */
import { ToolpactError } from "@toolpact/contract";
import type { PostgresSettings } from "./settings.js";

/** What a caller learns when the database fails a call; the details go to the store's logger. */
export const STORE_UNAVAILABLE_MESSAGE = "the store is unavailable; try again shortly";

/** Node socket errors that mean the server cannot be reached. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
/** Errors `pg` and `pg-pool` raise themselves when a connection fails, times out or dies. */
const DRIVER_MESSAGES = /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|not queryable|Client was closed/i;

/** True when `error` says the database was not reached or the connection died (not an answer from the server). */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === "string") {
    if (NETWORK_CODES.has(code)) return true;
    // SQLSTATE 08xxx connection exception, 57P01-03 shutdown / cannot connect now, 53300 too many connections.
    if (code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03" || code === "53300") return true;
  }
  return error instanceof Error && DRIVER_MESSAGES.test(error.message);
}

/** True when the client gave up waiting for the server's answer (the server may still be working). */
export function isQueryTimeout(error: unknown): boolean {
  return error instanceof Error && /Query read timeout/i.test(error.message);
}

/** SQLSTATEs after which a statement can simply run again: nothing of it was kept. */
const RETRYABLE = new Set(["40001", "40P01"]);

/**
 * The operator's account of a failure: where, what, why and what to check; never the password. Start-up
 * (open, migrate) throws it as it is; a call's failure goes to the log (see `failedCall`).
 */
function describeFailure(settings: PostgresSettings, what: string, cause: unknown): string {
  const code = (cause as { code?: unknown } | undefined)?.code;
  const detail = typeof code === "string" ? code : cause instanceof Error ? cause.message : String(cause);
  let text: string;
  if (isConnectionError(cause)) {
    text = `PostgreSQL at ${settings.where} ${what}: the database is unreachable (${detail}); check that it runs and that this host can reach it`;
  } else if (code === "57014") {
    text = `PostgreSQL at ${settings.where} ${what}: a statement ran past its statement timeout; the database is overloaded or a lock is held`;
  } else {
    const message = cause instanceof Error && typeof code === "string" ? `${cause.message} (SQLSTATE ${code})` : detail;
    const hint =
      typeof code === "string" && code.startsWith("23")
        ? "the row conflicts with one already stored"
        : "check the database's logs and that every instance runs the same toolpact version";
    text = `PostgreSQL at ${settings.where} ${what}: ${message}; ${hint}`;
  }
  return settings.password === undefined ? text : text.replaceAll(settings.password, "***");
}

/** A start-up failure (open, migrate): the operator reads it, so it says everything but the password. */
export function unavailable(settings: PostgresSettings, what: string, cause: unknown): ToolpactError {
  return new ToolpactError("STORE_UNAVAILABLE", describeFailure(settings, what, cause), {}, { cause });
}

/**
 * A call's failure: the caller gets STORE_UNAVAILABLE_MESSAGE and nothing about the database; the
 * details go to the store's logger.
 */
export function failedCall(settings: PostgresSettings, what: string, cause: unknown): ToolpactError {
  const code = (cause as { code?: unknown } | undefined)?.code;
  settings.logger?.error({
    event: "store_unavailable",
    store: "postgres",
    reason: isConnectionError(cause) ? "unreachable" : code === "57014" ? "statement_timeout" : "error",
    ...(typeof code === "string" ? { code } : {}),
    detail: describeFailure(settings, what, cause),
  });
  return new ToolpactError("STORE_UNAVAILABLE", STORE_UNAVAILABLE_MESSAGE);
}

/** An answer from the server (it carries a SQLSTATE): the connection itself is still good. */
export function hasSqlState(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !isConnectionError(error);
}

/** The server asked for the statement to run again (serialization failure, deadlock): nothing of it was kept. */
export function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && RETRYABLE.has(code);
}

/** True when the driver's error carries this SQLSTATE. */
export function hasCode(error: unknown, code: string): boolean {
  return (error as { code?: unknown } | undefined)?.code === code;
}
