/**
 * `@toolpact/client/internal`: not part of the public API, no compatibility promise. The HTTP client
 * `createHttpTransport` sends with, so benchmarks can run bare tRPC on the very same one.
 */
export { httpFetch } from "#http-fetch";
export type { WireFetch, WireRequestInit, WireResponse } from "./http-fetch.js";
