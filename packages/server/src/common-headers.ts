/**
 * The headers every answer of toolpact's routes carries, set on the way out of the Fetch handler.
 */

/** The headers every answer carries (`connection: close` while the server drains). */
export function withCommonHeaders(response: Response, closing: boolean): Response {
  if (response.type === "error") return response;
  try {
    response.headers.set("x-content-type-options", "nosniff");
    if (!response.headers.has("cache-control")) response.headers.set("cache-control", "no-store");
    if (closing) response.headers.set("connection", "close");
    return response;
  } catch {
    // Immutable headers (a Response from fetch()): copy them.
    const copy = new Response(response.body, response);
    return withCommonHeaders(copy, closing);
  }
}
