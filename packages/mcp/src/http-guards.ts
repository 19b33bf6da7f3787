/**
 * What `/mcp` checks before the MCP SDK sees a request: where it claims to come from (DNS rebinding),
 * and who sends it (401 with `WWW-Authenticate`). Refusals are JSON-RPC errors.
 */
import { isToolpactError } from "@toolpact/contract";

/** The JSON-RPC error code of a request refused before it reached MCP (the SDK's transports use it too). */
export const TRANSPORT_ERROR = -32000;

/** A JSON-RPC error answer with an HTTP status. */
export function refuse(status: number, message: string, headers: Record<string, string> = {}, code = TRANSPORT_ERROR): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });
}

const LOOPBACK_HOSTNAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);
/** How many allowed `Host` and `Origin` hosts a check remembers (any port of a loopback name is allowed, so bound them). */
const MAX_REMEMBERED_HOSTS = 256;

/**
 * A check of `Host` and `Origin` against DNS rebinding: a request must name this server by a loopback
 * name (any port) or by the host of its public URL, and an `Origin`, when sent, must be one of those.
 * Answers the refusal's reason, or undefined when the request may go on.
 */
export function createHostCheck(publicUrl: string | URL | undefined): (host: string | undefined, origin: string | undefined) => string | undefined {
  const publicHost = publicUrl === undefined ? undefined : new URL(publicUrl).host.toLowerCase();
  // Hosts found allowed, as sent: every request names one, so most are answered without parsing a URL.
  const allowedHosts = new Set<string>();
  const allowed = (host: string): boolean => {
    if (allowedHosts.has(host)) return true;
    let parsed: URL;
    try {
      parsed = new URL(`http://${host}`);
    } catch {
      return false;
    }
    const ok = LOOPBACK_HOSTNAMES.has(parsed.hostname) || parsed.host === publicHost;
    if (ok && allowedHosts.size < MAX_REMEMBERED_HOSTS) allowedHosts.add(host);
    return ok;
  };
  const names = `localhost, 127.0.0.1, [::1]${publicHost === undefined ? "" : ` or ${publicHost}`}`;
  return (host, origin) => {
    if (host === undefined || !allowed(host)) {
      return `Host "${String(host).slice(0, 200)}" is not this server: MCP requests must name it as ${names} (set "publicUrl" to the address clients use)`;
    }
    if (origin !== undefined && origin !== "null") {
      let originHost: string | undefined;
      try {
        originHost = new URL(origin).host;
      } catch {
        originHost = undefined;
      }
      if (originHost === undefined || !allowed(originHost)) {
        return `Origin "${origin.slice(0, 200)}" may not call this server: MCP requests from a browser page must come from ${names}`;
      }
    }
    return undefined;
  };
}

/** The `WWW-Authenticate` challenges of an OAuth resource server (RFC 6750, RFC 9728), when toolpact is one. */
export interface OAuthChallenges {
  /** A 401's: where the metadata is, the scopes, and the reason a presented token failed. */
  unauthenticated(reason: string | undefined): string;
  /** A 403's for a call that needs `scope` (step-up). */
  insufficientScope(scope: string): string;
}

/**
 * Answers 401 for a failed step 1, with `WWW-Authenticate` (RFC 6750; with `resource_metadata` when
 * `oauth` is given); 403 for a caller that authenticated but may not call here (an unmapped OAuth
 * client); other failures are 503.
 */
export function refuseUnauthenticated(error: unknown, presented: boolean, oauth?: OAuthChallenges): Response {
  if (isToolpactError(error) && error.code === "PERMISSION_DENIED") return refuse(403, `PERMISSION_DENIED: ${error.message}`);
  if (!isToolpactError(error) || error.code !== "UNAUTHENTICATED") {
    const reason = isToolpactError(error) ? `${error.code}: ${error.message}` : "the caller could not be authenticated";
    return refuse(503, `${reason}; retry later`);
  }
  const description = error.message.replace(/[^\x20-\x7e]|["\\]/g, "'").slice(0, 300);
  const challenge =
    oauth !== undefined
      ? oauth.unauthenticated(presented ? error.message : undefined)
      : presented
        ? `Bearer realm="toolpact", error="invalid_token", error_description="${description}"`
        : `Bearer realm="toolpact"`;
  const how =
    oauth !== undefined
      ? "MCP clients authenticate with an OAuth access token for this server (its authorization server is named in the metadata " +
        "WWW-Authenticate points to), or like any toolpact caller: Authorization: Bearer <plugin key> and X-Toolpact-Actor: <actor token>"
      : "MCP clients authenticate like any toolpact caller: Authorization: Bearer <plugin key> and X-Toolpact-Actor: <actor token>";
  return refuse(401, `UNAUTHENTICATED: ${error.message}. ${how}`, { "www-authenticate": challenge });
}

/** Answers 403 `insufficient_scope` for a tool call the access token's scopes do not grant: nothing ran (MCP step-up). */
export function refuseInsufficientScope(oauth: OAuthChallenges, scope: string, tool: string): Response {
  return refuse(403, `PERMISSION_DENIED: the access token does not grant ${tool}: ask the authorization server for the scope "${scope}" and retry`, {
    "www-authenticate": oauth.insufficientScope(scope),
  });
}
