/**
 * Step 1 for `/trpc` and `/mcp` alike: a request authenticates either with a plugin key and an actor
 * token (plugin callers) or, when `oauth` is configured, with an OAuth access token alone (remote
 * clients). The two never mix: an access token beside an actor token is refused.
 */
import { ToolpactError, isToolpactError } from "@toolpact/contract";
import type { Principal, Runtime } from "@toolpact/runtime";
import { credentialsOf } from "../credentials.js";
import type { Logger } from "../logger.js";
import { isPluginKey, type ResourceServer } from "./resource-server.js";

/** Authenticates a request by its headers. */
export type CallerAuthentication = (headers: Headers) => Promise<Principal>;

/** Step 1 over the runtime's plugin keys and actor tokens, and `resourceServer`'s access tokens when given. */
export function createCallerAuthentication(runtime: Runtime, resourceServer: ResourceServer | undefined, logger: Logger): CallerAuthentication {
  return async (headers) => {
    const credentials = credentialsOf(headers);
    const token = credentials.pluginKey;
    if (resourceServer === undefined || token === undefined || isPluginKey(token)) return runtime.authenticate(credentials);
    try {
      if (credentials.actorToken !== undefined) {
        throw new ToolpactError(
          "UNAUTHENTICATED",
          "the request carries an OAuth access token and an actor token (X-Toolpact-Actor): send an access token alone, or a plugin key with an actor token, never both",
        );
      }
      return await resourceServer.authenticate(token, credentials.via ?? "http");
    } catch (error) {
      // The reason only: never the token.
      logger.warn({ event: "oauth_token_refused", reason: isToolpactError(error) ? `${error.code}: ${error.message}` : "unexpected failure" });
      throw error;
    }
  };
}
