/**
 * How the routes serve the console: only when asked (`console` option), only on a server of its own
 * (a mounted handler shares the app's origin, whose scripts could use an operator's session), only with
 * an admin key, and with session keys of its own derived from the routes' session secret.
 */
import { randomBytes } from "node:crypto";
import type { Runtime } from "@toolpact/runtime";
import type { Logger } from "../logger.js";
import { DEFAULT_CONSOLE_SESSION_TTL_SECONDS } from "./console-config.js";
import { CONSOLE_PATH, createConsole } from "./console-routes.js";
import { createConsoleSessions } from "./console-session.js";

/** The console's options on the routes. */
export interface ConsoleRouteOptions {
  /** How long a sign-in lasts, seconds; default eight hours. */
  readonly sessionTtlSeconds?: number;
}

/** The parts of the routes' options the console reads. */
interface RoutesParts {
  readonly runtime: Runtime;
  readonly adminKey: string | undefined;
  readonly sessionSecret?: Uint8Array;
  readonly console?: ConsoleRouteOptions;
}

/** What the routes lend the console. */
interface RoutesContext {
  readonly mounted: boolean;
  readonly isAdminKey: (presented: string | undefined) => boolean;
  readonly publicUrl: URL | undefined;
  readonly logger: Logger;
}

/** True for `/console` and every path below it. */
export function isConsolePath(path: string): boolean {
  return path === CONSOLE_PATH || path.startsWith(`${CONSOLE_PATH}/`);
}

/**
 * The console's handler, or undefined when the routes were not asked for it.
 * @throws TypeError when asked for on a mounted handler or without an admin key.
 */
export function createConsoleRoute(
  options: RoutesParts,
  context: RoutesContext,
): ((request: Request, path: string, search: string) => Promise<Response>) | undefined {
  if (options.console === undefined) return undefined;
  if (context.mounted) {
    throw new TypeError(
      "the operator console is served only by a server of its own (toolpact serve), not by a handler mounted in an app: remove the console option",
    );
  }
  if (options.adminKey === undefined || options.adminKey.length === 0) {
    throw new TypeError("the operator console signs in with the admin key: set TOOLPACT_ADMIN_KEY (or secrets.adminKey), or turn the console off");
  }
  const { publicUrl } = context;
  const prefix = publicUrl === undefined ? "" : publicUrl.pathname.replace(/\/+$/, "");
  const sessions = createConsoleSessions({
    secret: options.sessionSecret ?? new Uint8Array(randomBytes(32)),
    adminKey: options.adminKey,
    ttlSeconds: options.console.sessionTtlSeconds ?? DEFAULT_CONSOLE_SESSION_TTL_SECONDS,
    secure: publicUrl?.protocol === "https:",
    path: `${prefix}${CONSOLE_PATH}`,
    clock: Date.now,
  });
  return createConsole({
    runtime: options.runtime,
    sessions,
    base: `${prefix}${CONSOLE_PATH}`,
    publicHost: publicUrl?.host,
    isAdminKey: context.isAdminKey,
    logger: context.logger,
  });
}
