/**
 * How many requests each caller may hold at once: requests in flight and long polls (`confirmations.wait`,
 * MCP streams) counted apart, per presented plugin key (an OAuth caller: per issuer, client and subject of
 * its verified access token), before any body is read or the database is asked.
 * One caller past its bound gets RATE_LIMITED while every other caller keeps its share of the pool.
 */

/** The per-caller bounds. */
export interface CallerBounds {
  readonly maxRequests: number;
  readonly maxLongPolls: number;
}

/** A request that may go on (call `release` once it ends), or the refusal's message. */
export type Admission = { readonly ok: true; readonly release: () => void } | { readonly ok: false; readonly message: string };

/** How long a refused caller is told to wait, seconds (the `Retry-After` header). */
export const RETRY_AFTER_SECONDS = 1;

/** Counts what each caller holds; `admit` before the work, `release` when the response closes. */
export function createCallerAdmission(bounds: CallerBounds): (callerKey: string, longPoll: boolean) => Admission {
  const requests = new Map<string, number>();
  const longPolls = new Map<string, number>();
  return (callerKey, longPoll) => {
    const held = longPoll ? longPolls : requests;
    const limit = longPoll ? bounds.maxLongPolls : bounds.maxRequests;
    const count = held.get(callerKey) ?? 0;
    if (count >= limit) {
      const what = longPoll ? `${limit} long polls open` : `${limit} requests in flight`;
      const setting = longPoll ? "maxLongPollsPerCaller" : "maxRequestsPerCaller";
      return {
        ok: false,
        message:
          `this caller already has ${what}, the most one plugin key may hold at once: ` +
          `retry after ${RETRY_AFTER_SECONDS} s, once some have finished (the server's "limits.${setting}" in toolpact.config.json)`,
      };
    }
    held.set(callerKey, count + 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        const left = (held.get(callerKey) ?? 1) - 1;
        if (left === 0) held.delete(callerKey);
        else held.set(callerKey, left);
      },
    };
  };
}
