import { ToolpactError } from "@toolpact/protocol";

/**
 * What the HTTP transport's tRPC link sends: tRPC's httpLink calls a fetch with a string URL and these
 * members (headers as a plain object), and reads only the status and the JSON body of the answer.
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

/** A fetch reduced to what the tRPC link uses; the transport's own HTTP client (undici in Node, fetch elsewhere). */
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

/** The Node error code of a failure that happened before the request left, looking one `cause` deep. */
function notSentCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; depth < 3 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && NOT_SENT_CODES.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * REQUEST_NOT_SENT for a failure that happened before the request left this process (connection
 * refused, unknown host, TLS refused the server), else undefined: the request may have reached the
 * server, and what it did is unknown.
 */
export function requestNotSent(error: unknown, url: string): ToolpactError | undefined {
  const code = notSentCode(error);
  if (code === undefined) return undefined;
  const reason = error instanceof Error ? innermostMessage(error) : code;
  return new ToolpactError(
    "REQUEST_NOT_SENT",
    `could not reach the toolpact server at ${originOf(url)} (${reason}); the request was never sent, so nothing ran: ` +
      "check that the server is running and that the transport's `url` points at it, then call again",
    {},
    { cause: error },
  );
}

/** Wraps a fetch so that a request that never left rejects with REQUEST_NOT_SENT. */
export function withSendFailures(fetch: WireFetch): WireFetch {
  return async (url, init) => {
    try {
      return await fetch(url, init);
    } catch (error) {
      throw requestNotSent(error, url) ?? error;
    }
  };
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
