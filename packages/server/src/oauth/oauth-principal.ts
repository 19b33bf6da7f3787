/**
 * Who a verified access token makes the caller: its client (`client_id`, else `azp`) acts as the caller
 * plugin `oauth.clients` maps it to, for the user its issuer's `userClaim` names, in the tenant the issuer
 * fixes or its `tenantClaim` names, limited to the token's tool scopes.
 */
import { ToolpactError } from "@toolpact/contract";
import type { CallerTransport, Principal } from "@toolpact/runtime";
import type { VerifiedAccessToken } from "./access-tokens.js";
import type { OAuthConfig } from "./oauth-config.js";

/** The client a token was issued to: `client_id` (RFC 9068), else `azp`. */
export function clientOf(claims: Readonly<Record<string, unknown>>): string | undefined {
  const client = claims.client_id ?? claims.azp;
  return typeof client === "string" && client.length > 0 ? client : undefined;
}

/** The scopes a token grants: its `scope` (space-separated), else an `scp` array. */
export function scopesOf(claims: Readonly<Record<string, unknown>>): string[] {
  if (typeof claims.scope === "string") return claims.scope.split(" ").filter((scope) => scope.length > 0);
  if (Array.isArray(claims.scp)) return claims.scp.filter((scope): scope is string => typeof scope === "string");
  return [];
}

/**
 * The principal of a verified token.
 * @throws UNAUTHENTICATED when the token lacks a client, user or tenant, or names a tenant its issuer does not serve;
 *   PERMISSION_DENIED when its client is not mapped to a caller plugin.
 */
export function principalOf(token: VerifiedAccessToken, clients: OAuthConfig["clients"], via: CallerTransport): Principal {
  const { issuer, claims } = token;
  const client = clientOf(claims);
  if (client === undefined) throw refused("the access token names no client (client_id or azp claim)");
  const callerPluginId = Object.hasOwn(clients, client) ? clients[client] : undefined;
  if (callerPluginId === undefined) {
    throw new ToolpactError(
      "PERMISSION_DENIED",
      `the OAuth client ${JSON.stringify(client.slice(0, 200))} may not call tools here: the server's operator maps each client to a caller plugin in "oauth.clients" of toolpact.config.json`,
    );
  }
  const userId = nameClaim(claims[issuer.userClaim], 256, `"${issuer.userClaim}" claim (the user)`);
  const claimed = issuer.tenantClaim === undefined ? undefined : nameClaim(claims[issuer.tenantClaim], 128, `"${issuer.tenantClaim}" claim (the tenant)`);
  if (issuer.tenant !== undefined && claimed !== undefined && claimed !== issuer.tenant) {
    throw refused(`the access token is for tenant ${JSON.stringify(claimed)}, but issuer ${issuer.issuer} serves tenant ${JSON.stringify(issuer.tenant)} only`);
  }
  const tenantId = issuer.tenant ?? claimed!;
  const roles = Array.isArray(claims.roles) ? claims.roles.filter((role): role is string => typeof role === "string" && role.length <= 128).slice(0, 64) : [];
  return Object.freeze({
    tenantId,
    callerPluginId,
    actor: Object.freeze({ userId, verificationLevel: issuer.verificationLevel, roles: Object.freeze(roles) }),
    via,
    authenticatedBy: "oauth",
    scopes: Object.freeze(scopesOf(claims)),
  });
}

/** A string claim of 1 to `max` characters without control characters. */
function nameClaim(value: unknown, max: number, what: string): string {
  if (typeof value === "string" && value.length > 0 && value.length <= max && !/[\u0000-\u001F\u007F-\u009F]/.test(value)) return value;
  throw refused(`the access token's ${what} must be a string of 1 to ${max} characters without control characters`);
}

function refused(reason: string): ToolpactError {
  return new ToolpactError("UNAUTHENTICATED", reason);
}
