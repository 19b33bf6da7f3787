import type { IncomingHttpHeaders } from "node:http";

/**
 * Whether the browser says another site made this request: `Sec-Fetch-Site` of `cross-site` or
 * `same-site` (a sibling subdomain is another site for this purpose), or, from browsers that do not send
 * it, an `Origin` that is `null` or names another host than this server's (the request's `Host`, or
 * `publicUrl`'s host behind a proxy). A request with neither header (a non-browser client) is not foreign.
 */
export function isForeignSite(headers: IncomingHttpHeaders, publicHost: string | undefined): boolean {
  const site = headers["sec-fetch-site"];
  if (site !== undefined) return site === "cross-site" || site === "same-site";
  const origin = headers.origin;
  if (origin === undefined) return false;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return true; // "null" (a sandboxed or privacy-sensitive context) or nonsense
  }
  return host !== headers.host && host !== publicHost;
}

/**
 * True for a plain top-level navigation (a followed link, a typed URL, a redirect): the one way another
 * site may send a browser to the confirmation page's sign-in. Browsers without Fetch Metadata send no
 * `Sec-Fetch-Mode`/`Sec-Fetch-Dest`; for them the method decides.
 */
export function isTopLevelNavigation(method: string | undefined, headers: IncomingHttpHeaders): boolean {
  if (method !== "GET") return false;
  const mode = headers["sec-fetch-mode"];
  const dest = headers["sec-fetch-dest"];
  return (mode === undefined || mode === "navigate") && (dest === undefined || dest === "document");
}
