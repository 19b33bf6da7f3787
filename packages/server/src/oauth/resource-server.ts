/**
 * toolpact as an OAuth 2.1 resource server (docs/oauth.md): its Protected Resource Metadata (RFC 9728),
 * the `WWW-Authenticate` challenges that point clients at it, and the principal of an access token.
 */
import type { CallerTransport, Principal } from "@toolpact/runtime";
import { TOOL_SCOPES } from "@toolpact/runtime";
import { createAccessTokenVerifier } from "./access-tokens.js";
import type { OAuthConfig } from "./oauth-config.js";
import { clientOf, principalOf } from "./oauth-principal.js";

/** Where Protected Resource Metadata is served, below toolpact's routes; `/mcp`'s own is this plus `/mcp`. */
export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";

/** What the routes need of the resource server. */
export interface ResourceServer {
  /** The resource identifier access tokens must be for (their `aud`). */
  readonly resource: string;
  /** The URL of the metadata for `/mcp` (`forMcp`) or for the HTTP API. */
  metadataUrl(forMcp: boolean): string;
  /** The Protected Resource Metadata document. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** The `WWW-Authenticate` value of a 401: where the metadata is, the scopes, and why a presented token failed. */
  challenge(forMcp: boolean, invalidTokenReason?: string): string;
  /** The `WWW-Authenticate` value of a 403 for a call that needs `scope` (step-up). */
  insufficientScope(forMcp: boolean, scope: string): string;
  /** The caller an access token establishes. @throws UNAUTHENTICATED, PERMISSION_DENIED (unmapped client), STORE_UNAVAILABLE (issuer unreachable) */
  authenticate(token: string, via: CallerTransport): Promise<OAuthCaller>;
}

/** What a verified access token establishes. */
export interface OAuthCaller {
  readonly principal: Principal;
  /** What its requests are counted under (caller-admission.ts): its issuer, client and subject. */
  readonly callerKey: string;
}

/**
 * The resource server of `config`. `publicUrl`: where toolpact's routes are reached (the metadata is
 * served there); `resource` defaults to it.
 * @throws TypeError when neither `oauth.resource` nor `publicUrl` is known.
 */
export function createResourceServer(config: OAuthConfig, publicUrl: string | undefined): ResourceServer {
  const resource = config.resource ?? publicUrl;
  if (resource === undefined) {
    throw new TypeError('"oauth" needs this server\'s resource identifier: set "oauth.resource" or "publicUrl" to the https URL clients reach it at');
  }
  const base = (publicUrl ?? resource).replace(/\/+$/, "");
  const verify = createAccessTokenVerifier(config, resource);
  const metadataUrl = (forMcp: boolean) => `${base}${PROTECTED_RESOURCE_PATH}${forMcp ? "/mcp" : ""}`;
  const scopes = TOOL_SCOPES.join(" ");
  const challenge = (forMcp: boolean, params: Record<string, string>) =>
    `Bearer ${Object.entries({ resource_metadata: metadataUrl(forMcp), ...params })
      .map(([key, value]) => `${key}="${quotable(value)}"`)
      .join(", ")}`;
  return {
    resource,
    metadataUrl,
    metadata: Object.freeze({
      resource,
      authorization_servers: config.issuers.map((issuer) => issuer.issuer),
      scopes_supported: TOOL_SCOPES,
      bearer_methods_supported: ["header"],
      resource_name: "toolpact",
      resource_documentation: "https://github.com/toolpact/toolpact/blob/main/docs/oauth.md",
    }),
    challenge: (forMcp, reason) =>
      challenge(forMcp, reason === undefined ? { scope: scopes } : { scope: scopes, error: "invalid_token", error_description: reason }),
    insufficientScope: (forMcp, scope) => challenge(forMcp, { error: "insufficient_scope", scope, error_description: `this call needs the scope ${scope}` }),
    authenticate: async (token, via) => {
      const verified = await verify(token);
      const principal = principalOf(verified, config.clients, via);
      return {
        principal,
        callerKey: `oauth\n${verified.issuer.issuer}\n${clientOf(verified.claims)}\n${String(verified.claims.sub ?? principal.actor.userId)}`,
      };
    },
  };
}

/** True for a bearer token that is a toolpact plugin key (or admin key shape), not an OAuth access token. */
export function isPluginKey(token: string): boolean {
  return token.startsWith("tpk_");
}

/** A header parameter value: printable ASCII without quotes or backslashes, at most 300 characters. */
function quotable(value: string): string {
  return value.replace(/[^\x20-\x7e]|["\\]/g, "'").slice(0, 300);
}
