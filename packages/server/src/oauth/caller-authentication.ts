/**
 * Step 1 for `/trpc` and `/mcp` alike: a request authenticates either with a plugin key and an actor
 * token (plugin callers) or, when `oauth` is configured, with an OAuth access token alone (remote
 * clients). The two never mix: an access token beside an actor token is refused.
 */
import { createHash } from "node:crypto";
import { ToolpactError, isToolpactError } from "@toolpact/contract";
import type { Principal, Runtime } from "@toolpact/runtime";
import { credentialsOf } from "../credentials.js";
import type { Logger } from "../logger.js";
import { isPluginKey, type OAuthCaller, type ResourceServer } from "./resource-server.js";

/** How requests authenticate, by their headers. */
export interface CallerAuthentication {
  /** Step 1: the principal the request's credentials establish. */
  authenticate(headers: Headers): Promise<Principal>;
  /**
   * What the request counts under for the per-caller bounds: its plugin key; a verified access token's
   * issuer, client and subject (a token that does not verify: its own hash, so a forged token can fill
   * no one else's share); undefined when it presents no bearer token. `admin`: the request is for an
   * admin procedure, whose bearer is the admin key: counted under it, never sent to an issuer.
   */
  callerKey(headers: Headers, admin?: boolean): string | Promise<string> | undefined;
}

/** Step 1 over the runtime's plugin keys and actor tokens, and `resourceServer`'s access tokens when given. */
export function createCallerAuthentication(runtime: Runtime, resourceServer: ResourceServer | undefined, logger: Logger): CallerAuthentication {
  // One verification per request: the bounds' key and step 1 share it.
  const verified = new WeakMap<Headers, Promise<OAuthCaller>>();
  const oauthCaller = (headers: Headers, token: string, actorToken: string | undefined, via: "http" | "mcp" | "in-process"): Promise<OAuthCaller> => {
    let caller = verified.get(headers);
    if (caller === undefined) {
      caller = (async () => {
        if (actorToken !== undefined) {
          throw new ToolpactError(
            "UNAUTHENTICATED",
            "the request carries an OAuth access token and an actor token (X-Toolpact-Actor): send an access token alone, or a plugin key with an actor token, never both",
          );
        }
        return resourceServer!.authenticate(token, via);
      })();
      verified.set(headers, caller);
    }
    return caller;
  };
  const oauthToken = (headers: Headers) => {
    const credentials = credentialsOf(headers);
    const token = credentials.pluginKey;
    const oauth = resourceServer !== undefined && token !== undefined && !isPluginKey(token);
    return { credentials, token, oauth };
  };
  return {
    authenticate: async (headers) => {
      const { credentials, token, oauth } = oauthToken(headers);
      if (!oauth) return runtime.authenticate(credentials);
      try {
        const { principal } = await oauthCaller(headers, token!, credentials.actorToken, credentials.via ?? "http");
        // The trace is the request's own (never part of the cached verification).
        return credentials.traceContext === undefined ? principal : Object.freeze({ ...principal, traceContext: credentials.traceContext });
      } catch (error) {
        // The reason only: never the token.
        logger.warn({ event: "oauth_token_refused", reason: isToolpactError(error) ? `${error.code}: ${error.message}` : "unexpected failure" });
        throw error;
      }
    },
    callerKey: (headers, admin = false) => {
      const { credentials, token, oauth } = oauthToken(headers);
      if (!oauth || admin) return token;
      return oauthCaller(headers, token!, credentials.actorToken, credentials.via ?? "http").then(
        (caller) => caller.callerKey,
        () => `oauth-token\n${createHash("sha256").update(token!).digest("base64url")}`,
      );
    },
  };
}
