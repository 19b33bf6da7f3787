/**
 * The route table of toolpact's Fetch handler: which route a path is (the optional ones, the console and
 * OAuth metadata, only when served), and how a route goes on once its caller is admitted, or is refused.
 */
import { isConsolePath } from "./console/console-route.js";
import { CONFIRM_PREFIX } from "./confirmation-page.js";
import { PROTECTED_RESOURCE_PATH } from "./oauth/resource-server.js";

export const TRPC_PREFIX = "/trpc/";
export const MCP_PATH = "/mcp";

/** A request's admission: its release, or the refusal's message. */
export type Admitted = (() => void) | string;

/** Goes on with `admitted` once the request is admitted (at once for a plugin key; after its token verified for OAuth), else `refused`. */
export function afterAdmission(
  admission: Admitted | Promise<Admitted>,
  refused: (message: string) => Response,
  admitted: (release: () => void) => Promise<Response> | Response,
): Promise<Response> | Response {
  if (admission instanceof Promise) return admission.then((settled) => afterAdmission(settled, refused, admitted));
  return typeof admission === "string" ? refused(admission) : admitted(admission);
}

export type Route = "trpc" | "mcp" | "confirm" | "console" | "healthz" | "readyz" | "oauth-metadata";

/** The optional routes this handler serves. */
export interface OptionalRoutes {
  readonly console: boolean;
  readonly oauth: boolean;
}

/** The route `path` is, among those `serves` says are served; undefined for none. */
export function routeOfPath(path: string, serves: OptionalRoutes): Route | undefined {
  if (path.startsWith(TRPC_PREFIX)) return "trpc";
  if (serves.console && isConsolePath(path)) return "console";
  if (path === MCP_PATH) return "mcp";
  if (path.startsWith(CONFIRM_PREFIX)) return "confirm";
  if (path === "/healthz") return "healthz";
  if (path === "/readyz") return "readyz";
  if (serves.oauth && (path === PROTECTED_RESOURCE_PATH || path === `${PROTECTED_RESOURCE_PATH}${MCP_PATH}`)) return "oauth-metadata";
  return undefined;
}
