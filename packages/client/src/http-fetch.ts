// What a failed exchange means is decided once, in @toolpact/protocol (`toolpact mcp` decides the same way).
import { withSendFailures as withSendFailuresTo, type WireFetch } from "@toolpact/protocol";

export type { WireFetch, WireRequestInit, WireResponse } from "@toolpact/protocol";

/** How the transport's errors name where the server's URL came from. */
export const URL_SETTING = "the transport's `url`";

/** Wraps a fetch so that a request that never left rejects with REQUEST_NOT_SENT. */
export function withSendFailures(fetch: WireFetch): WireFetch {
  return withSendFailuresTo(fetch, URL_SETTING);
}
