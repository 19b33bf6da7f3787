// Where `fetch` is the platform's HTTP client (browsers, a trusted confirmation UI): the global fetch.
// Node resolves `#http-fetch` to http-fetch-node.ts instead (package.json "imports").
import { withSendFailures, type WireFetch, type WireRequestInit } from "./http-fetch.js";

/** The global fetch, typed without the DOM lib; a request that never left rejects with REQUEST_NOT_SENT. */
export const httpFetch: WireFetch = withSendFailures((url: string, init?: WireRequestInit) => (globalThis as unknown as { fetch: WireFetch }).fetch(url, init));
