/**
 * Third-party modules only @toolpact/server depends on (the repository root does not), resolved from
 * that package so tests under test/ can load them.
 */
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const fromServer = createRequire(new URL("../../../packages/server/package.json", import.meta.url));

/** Loads playwright-core (a dev dependency of @toolpact/server). */
export async function loadPlaywright(): Promise<typeof import("playwright-core")> {
  return (await import(pathToFileURL(fromServer.resolve("playwright-core")).href)) as typeof import("playwright-core");
}
