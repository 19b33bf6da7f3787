import type { Manifest } from "@toolpact/contract";
import { SECRET_ENV_VARS } from "../host/secret-variables.js";

/** The host's own secret variables and their `_FILE` twins: never in an isolated child's environment. */
const HOST_SECRETS: ReadonlySet<string> = new Set(SECRET_ENV_VARS.flatMap((name) => [name, `${name}_FILE`]));

/**
 * What an isolated child sees of the environment: the manifest's `process.env` values and the `passEnv`
 * names the host has a value for; nothing else. The host's own secrets are refused by name.
 * @returns the environment, or the problems with the manifest's names
 */
export function childEnvironment(manifest: Manifest, hostEnv: NodeJS.ProcessEnv): Record<string, string> | string[] {
  const { env = {}, passEnv = [] } = manifest.process ?? {};
  const refused = [...Object.keys(env), ...passEnv].filter((name) => HOST_SECRETS.has(name));
  if (refused.length > 0) {
    return refused.map(
      (name) =>
        `plugin "${manifest.id}": "process" names ${name}, one of the host's own secrets, which an isolated plugin never sees: ` +
        "remove it, and give the plugin a credential of its own",
    );
  }
  const childEnv: Record<string, string> = {};
  for (const name of passEnv) {
    const value = hostEnv[name];
    if (value !== undefined) childEnv[name] = value;
  }
  return Object.assign(childEnv, env);
}
