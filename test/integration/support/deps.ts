/**
 * Third-party modules the integration tests use, resolved from the package that depends on them:
 * the repository root declares no dependencies, so bare imports from test/ do not resolve.
 */
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const fromServer = createRequire(new URL("../../../packages/server/package.json", import.meta.url));

export const jose = (await import(pathToFileURL(fromServer.resolve("jose")).href)) as typeof import("jose");
