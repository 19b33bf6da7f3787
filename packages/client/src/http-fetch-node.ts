// In Node the transport sends over one undici keep-alive pool (the engine under Node's own fetch), calling
// `request` directly: no WHATWG Request, Response or stream per call. Browsers resolve `#http-fetch` to
// http-fetch-web.ts (package.json "imports").
import type { Dispatcher, request as undiciRequest } from "undici";
import { withSendFailures, type WireFetch, type WireRequestInit, type WireResponse } from "./http-fetch.js";

/** The pool and the function that sends on it. */
interface Sender {
  readonly pool: Dispatcher;
  readonly request: typeof undiciRequest;
}

/**
 * One pool for every transport of the process: connections to a server are kept alive and reused by
 * all transports that talk to it (idle ones close after the server's keep-alive hint, at most 4 s).
 * The default body and header timeouts (300 s) leave room for the ~25 s confirmation long poll.
 * undici loads with the first request, so importing the client stays cheap.
 */
let sender: Promise<Sender> | undefined;

function loadSender(): Promise<Sender> {
  sender ??= import("undici").then(({ Agent, request }) => ({ pool: new Agent({ keepAliveTimeout: 4_000 }), request }));
  return sender;
}

/** A fetch over the shared undici pool; a request that never left rejects with REQUEST_NOT_SENT. */
export const httpFetch: WireFetch = withSendFailures(async (url: string, init?: WireRequestInit): Promise<WireResponse> => {
  const { pool, request } = await loadSender();
  const response = await request(url, {
    dispatcher: pool,
    method: (init?.method ?? "GET") as Dispatcher.HttpMethod,
    headers: (init?.headers ?? {}) as Record<string, string>,
    body: init?.body ?? null,
    signal: init?.signal ?? null,
  });
  // Read the body at once, whatever the status: an unread body would hold its connection.
  const text = await response.body.text();
  const status = response.statusCode;
  return { ok: status >= 200 && status < 300, status, json: async () => JSON.parse(text) as unknown };
});
