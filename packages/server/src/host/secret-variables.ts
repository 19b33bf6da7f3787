import { readFileSync } from "node:fs";
import { HostError } from "./host-error.js";

/** The environment variables a host reads its secrets from; all are removed before any plugin loads. */
export const SECRET_ENV_VARS = [
  "TOOLPACT_ADMIN_KEY",
  "TOOLPACT_ACTOR_SECRET",
  "TOOLPACT_SIGNING_KEYS",
  "TOOLPACT_STORAGE_KEY",
  "TOOLPACT_DATABASE_URL",
] as const;

/** One of the secret variables. */
export type SecretEnvVar = (typeof SECRET_ENV_VARS)[number];

/**
 * A secret from the environment: `NAME` itself, or the contents of the file `NAME_FILE` names (trailing
 * line breaks dropped, as a secret manager's mounted file has them). Undefined when neither is set.
 * @throws HostError naming the variable and the file when the file is missing or unreadable, or both are set.
 */
export function readSecretVariable(env: NodeJS.ProcessEnv, name: SecretEnvVar): string | undefined {
  const value = nonEmpty(env[name]);
  const file = nonEmpty(env[`${name}_FILE`]);
  if (file === undefined) return value;
  if (value !== undefined) {
    throw new HostError(`both ${name} and ${name}_FILE are set: set one of them (the file keeps the secret out of the environment)`);
  }
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new HostError(
      `${name}_FILE names ${file}, which cannot be read${typeof code === "string" ? ` (${code})` : ""}: ` + "point it at a readable file holding the secret",
      [],
      { cause: error },
    );
  }
  const secret = nonEmpty(text.replace(/[\r\n]+$/, ""));
  if (secret === undefined) throw new HostError(`${name}_FILE names ${file}, which is empty: write the secret into it`);
  return secret;
}

/** Removes every secret variable and its `_FILE` twin from `env`. */
export function removeSecretVariables(env: NodeJS.ProcessEnv): void {
  for (const name of SECRET_ENV_VARS) {
    delete env[name];
    delete env[`${name}_FILE`];
  }
}

/** An environment variable's value, unless it is empty. */
export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
