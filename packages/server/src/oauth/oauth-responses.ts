/**
 * The resource server's answers on `/trpc` and at its metadata route: Protected Resource Metadata (RFC
 * 9728), and the `WWW-Authenticate` headers of a refused call (RFC 6750: 401 with where to get a token,
 * 403 `insufficient_scope` naming the scope to ask for).
 */
import type { TRPCError } from "@trpc/server";
import { toPublicError } from "../errors.js";
import type { ResourceServer } from "./resource-server.js";

/** What the routes answer for the resource server. */
export interface OAuthResponses {
  /** `GET /.well-known/oauth-protected-resource` (and its `/mcp` form): the metadata, readable from any origin. */
  metadata(method: string): Response;
  /** The headers a tRPC answer with these errors adds; `presented`: the request sent an `Authorization` header. */
  trpcMeta(errors: readonly TRPCError[], presented: boolean): { headers?: Record<string, string> };
}

/** The answers of `resourceServer`. */
export function createOAuthResponses(resourceServer: ResourceServer): OAuthResponses {
  const body = JSON.stringify(resourceServer.metadata);
  return {
    metadata: (method) => {
      if (method === "OPTIONS") return new Response(null, { status: 204, headers: corsHeaders() });
      if (method !== "GET" && method !== "HEAD") {
        return new Response("method not allowed: GET the metadata", {
          status: 405,
          headers: { allow: "GET, HEAD, OPTIONS", "content-type": "text/plain; charset=utf-8" },
        });
      }
      return new Response(method === "HEAD" ? null : body, {
        status: 200,
        headers: { "content-type": "application/json", "cache-control": "public, max-age=300", ...corsHeaders() },
      });
    },
    trpcMeta: (errors, presented) => {
      for (const error of errors) {
        const refusal = toPublicError(error);
        if (refusal.toolpactCode === "UNAUTHENTICATED") {
          return { headers: { "www-authenticate": resourceServer.challenge(false, presented ? refusal.message : undefined) } };
        }
        const scope = refusal.toolpactData?.requiredScope;
        if (refusal.toolpactCode === "PERMISSION_DENIED" && scope !== undefined) {
          return { headers: { "www-authenticate": resourceServer.insufficientScope(false, scope) } };
        }
      }
      return {};
    },
  };
}

/** Browser-based clients read the metadata cross-origin; it holds nothing secret. */
function corsHeaders(): Record<string, string> {
  return { "access-control-allow-origin": "*", "access-control-allow-methods": "GET, HEAD, OPTIONS" };
}
