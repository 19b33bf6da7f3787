/**
 * What an HTTP exchange with something that should be a toolpact server means when no toolpact answer
 * came back: the one place that decides it, for every client of the wire (`@toolpact/client`'s HTTP
 * transport, `toolpact mcp`). A request that never left is REQUEST_NOT_SENT; an answer that is not
 * toolpact's is REQUEST_NOT_SENT when its status proves nothing ran at toolpact, else the outcome is unknown.
 */
import { ToolpactError, isToolpactError } from "./errors.js";
import { toToolpactError } from "./error-wire.js";

/**
 * What tRPC's httpLink sends: it calls a fetch with a string URL and these members (headers as a plain
 * object), and reads only the status and the JSON body of the answer.
 */
export interface WireRequestInit {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>> | readonly (readonly [string, string])[];
  readonly body?: string | null | undefined;
  readonly signal?: AbortSignal | null | undefined;
}

/** The answer as the tRPC link reads it. */
export interface WireResponse {
  readonly ok: boolean;
  readonly status: number;
  json(): Promise<unknown>;
}

/** A fetch reduced to what the tRPC link uses. */
export type WireFetch = (url: string, init?: WireRequestInit) => Promise<WireResponse>;

/**
 * Error codes of failures that happen before a request's first byte is written: the connection was
 * refused or could not be made, the host name did not resolve, or TLS refused the server. Node and
 * undici put them on the error (or on a fetch TypeError's `cause`).
 */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_FAIL",
  "EAI_NONAME",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_INVALID_ARG",
  "ERR_INVALID_URL",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
]);

/**
 * True when an answer that is not toolpact's, with this HTTP status, proves that toolpact ran nothing:
 * 2xx and 3xx (toolpact answers every call with its JSON, and nothing in between rewrites a success),
 * and 4xx but 403 and 409. A proxy answers a 4xx before it forwards; a proxy that replaces error pages
 * may hide toolpact's own answer, which with 403 (GUARD_REJECTED) or 409 (CONFIRMATION_USED,
 * OPERATION_IN_PROGRESS) can follow an effect, and every other 4xx toolpact answers only when nothing ran.
 * 5xx is unknown: a gateway answers 502 or 504 after it forwarded the request.
 */
export function provesNothingRan(status: number): boolean {
  return status >= 200 && status < 500 && status !== 403 && status !== 409;
}

/**
 * True for a body toolpact answers with: tRPC's `{ result }`, or `{ error }` carrying a toolpact code
 * (any string: a newer server's code is still toolpact's answer).
 */
export function isToolpactAnswer(body: unknown): boolean {
  if (!isRecord(body) || Array.isArray(body)) return false;
  if (isRecord(body.result)) return true;
  return isRecord(body.error) && isRecord(body.error.data) && typeof body.error.data.toolpactCode === "string";
}

/**
 * REQUEST_NOT_SENT for a failure that happened before the request left this process (connection
 * refused, unknown host, TLS refused the server), else undefined. `urlSetting` names where the URL came
 * from, for the advice (e.g. "the transport's `url`").
 */
export function requestNotSent(error: unknown, url: string, urlSetting: string): ToolpactError | undefined {
  const code = notSentCode(error);
  if (code === undefined) return undefined;
  const reason = error instanceof Error ? innermostMessage(error) : code;
  return new ToolpactError(
    "REQUEST_NOT_SENT",
    `could not reach the toolpact server at ${originOf(url)} (${reason}); the request was never sent, so nothing ran: ` +
      `check that the server is running and that ${urlSetting} points at it, then call again`,
    {},
    { cause: error },
  );
}

/**
 * What an answer that is not toolpact's means: REQUEST_NOT_SENT when its status proves nothing ran at
 * toolpact; else an error saying what came back, which `exchangeFailure` makes OUTCOME_UNKNOWN.
 */
export function unrecognisedAnswer(status: number, url: string, urlSetting: string): Error {
  const where = `the server at ${withoutQuery(url)} answered HTTP ${status} without toolpact's JSON`;
  if (provesNothingRan(status)) {
    return new ToolpactError(
      "REQUEST_NOT_SENT",
      `${where}: it is not a toolpact server or toolpact is not at that path (a wrong URL?), or something in front of ` +
        "toolpact refused the request; either way nothing ran at toolpact: " +
        `check that ${urlSetting} is the toolpact server's base URL (the one toolpact serve or toolpact dev prints), then call again`,
    );
  }
  return new Error(`${where}: a proxy or gateway in between, or not a toolpact server (a wrong URL?)`);
}

/** Wraps a fetch so that a request that never left rejects with REQUEST_NOT_SENT. */
export function withSendFailures(fetch: WireFetch, urlSetting: string): WireFetch {
  return async (url, init) => {
    try {
      return await fetch(url, init);
    } catch (error) {
      throw requestNotSent(error, url, urlSetting) ?? error;
    }
  };
}

/**
 * Wraps a fetch so that an answer that is not toolpact's (not JSON, or JSON of another shape) rejects
 * with `unrecognisedAnswer` instead of reaching tRPC, which would call it a failed call of unknown outcome.
 */
export function withToolpactAnswers(fetch: WireFetch, urlSetting: string): WireFetch {
  return async (url, init) => {
    const response = await fetch(url, init);
    let body: unknown;
    try {
      body = await response.json();
    } catch (error) {
      // A body that could not be read (the connection dropped) is a lost answer, not a foreign one.
      if (!(error instanceof SyntaxError)) throw error;
      throw unrecognisedAnswer(response.status, url, urlSetting);
    }
    if (!isToolpactAnswer(body)) throw unrecognisedAnswer(response.status, url, urlSetting);
    return { ok: response.ok, status: response.status, json: async () => body };
  };
}

/** The calls of the wire, as far as a lost answer is concerned: only an execute has an effect to be unknown about. */
export type WireCall = "list" | "find" | "preview" | "execute" | "wait" | "cancel";

/** What to do when the answer to a call without effect was lost. */
const AGAIN: { readonly [TCall in WireCall]: string | undefined } = {
  list: "list again (listing changes nothing)",
  find: "look the tool up again (looking up changes nothing)",
  preview: "preview again (a preview runs no tool)",
  execute: undefined,
  wait: "wait again (waiting decides nothing)",
  cancel: "cancel again (cancelling twice changes nothing more)",
};

/**
 * The ToolpactError of a failed call over tRPC: the server's, or the one the fetch threw (tRPC keeps it
 * as `cause`); anything else is OUTCOME_UNKNOWN, which for a call without effect (all but an execute)
 * says that no answer came back and to make the call again.
 */
export function exchangeFailure(error: unknown, call: WireCall): ToolpactError {
  const cause = isRecord(error) ? error.cause : undefined;
  if (isToolpactError(cause)) return cause;
  const failure = toToolpactError(error);
  const again = AGAIN[call];
  if (again === undefined || failure.code !== "OUTCOME_UNKNOWN" || failure.cause !== error) return failure;
  const reason = error instanceof Error && error.message ? error.message : "no answer";
  return new ToolpactError("OUTCOME_UNKNOWN", `no toolpact answer came back (${reason}): ${again}`, {}, { cause: error });
}

/** The Node error code of a failure that happened before the request left, looking a few `cause`s deep. */
function notSentCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; depth < 3 && isRecord(current); depth++) {
    const code = current.code;
    if (typeof code === "string" && NOT_SENT_CODES.has(code)) return code;
    current = current.cause;
  }
  return undefined;
}

function innermostMessage(error: Error): string {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message ? innermostMessage(cause) : error.message;
}

function originOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return url;
  }
}

/** The URL without its query (a query call's input travels there) or credentials. */
function withoutQuery(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return url.replace(/\?.*$/s, "");
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
