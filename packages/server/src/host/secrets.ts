import { randomBytes } from "node:crypto";
import { checkSecrets, parseSigningKeys, type SigningKey } from "@toolpact/runtime";
import { withoutUndefined } from "@toolpact/contract";
import { CONFIG_FILE, type HostConfig } from "./config.js";
import { HostError } from "./host-error.js";
import { SECRET_ENV_VARS, readSecretVariable, removeSecretVariables } from "./secret-variables.js";

export { SECRET_ENV_VARS } from "./secret-variables.js";

/** The secrets a host runs with, decoded and checked. */
export interface ResolvedSecrets {
  readonly adminKey: string;
  readonly actorSecret?: Uint8Array;
  readonly signingKeys: readonly SigningKey[];
  readonly storageKey: Uint8Array;
  /** Lines to show the operator for secrets `--dev` generated (empty otherwise). */
  readonly generated: readonly string[];
}

/**
 * Reads secrets from the environment (`TOOLPACT_<NAME>`, or the file `TOOLPACT_<NAME>_FILE` names) or,
 * failing that, the config; removes every secret variable and its `_FILE` twin from `env`; and checks
 * them (length, reuse). A missing secret is an error naming it, so is a `_FILE` that cannot be read;
 * `dev` generates throwaway ones instead and reports them in `generated`.
 */
export function readSecrets(config: HostConfig, options: { readonly env?: NodeJS.ProcessEnv; readonly dev?: boolean } = {}): ResolvedSecrets {
  const env = options.env ?? process.env;
  let fromEnv: Record<string, string | undefined>;
  try {
    fromEnv = Object.fromEntries(SECRET_ENV_VARS.map((name) => [name, readSecretVariable(env, name)]));
  } finally {
    removeSecretVariables(env);
  }

  const generated: string[] = [];
  const dev = options.dev === true;
  const pick = (envName: string, fileValue: string | undefined, makeDev: () => string): string | undefined => {
    const value = fromEnv[envName] ?? fileValue;
    if (value !== undefined) return value;
    if (!dev) return undefined;
    const made = makeDev();
    generated.push(`${envName}=${made}`);
    return made;
  };
  const missing = (envName: string, configKey: string, what: string) =>
    new HostError(
      `${what} is not set: set ${envName} (or "secrets.${configKey}" in ${CONFIG_FILE}); ` +
        "generate one with `openssl rand -base64 32`, or run `toolpact serve --dev` for throwaway secrets",
    );
  const random = () => randomBytes(32).toString("base64");

  const adminKey = pick("TOOLPACT_ADMIN_KEY", config.secrets.adminKey, () => randomBytes(32).toString("base64url"));
  if (adminKey === undefined) throw missing("TOOLPACT_ADMIN_KEY", "adminKey", "the admin key");
  const signingText = pick("TOOLPACT_SIGNING_KEYS", config.secrets.signingKeys, () => `dev:${random()}`);
  if (signingText === undefined) throw missing("TOOLPACT_SIGNING_KEYS", "signingKeys", "the confirmation signing key");
  const storageText = pick("TOOLPACT_STORAGE_KEY", config.secrets.storageKey, random);
  if (storageText === undefined) throw missing("TOOLPACT_STORAGE_KEY", "storageKey", "the storage key");
  const usesJwks = config.actorJwksUrl !== undefined;
  const actorText = usesJwks
    ? (fromEnv.TOOLPACT_ACTOR_SECRET ?? config.secrets.actorSecret)
    : pick("TOOLPACT_ACTOR_SECRET", config.secrets.actorSecret, random);
  if (actorText === undefined && !usesJwks) {
    throw missing("TOOLPACT_ACTOR_SECRET", "actorSecret", "the actor token secret (HS256)");
  }

  try {
    const signingKeys = parseSigningKeys(signingText);
    const storageKey = decodeBase64("TOOLPACT_STORAGE_KEY", storageText);
    const actorSecret = actorText === undefined ? undefined : decodeBase64("TOOLPACT_ACTOR_SECRET", actorText);
    checkSecrets({ signingKeys, storageKey, actorSecret, adminKey });
    return { adminKey, signingKeys, storageKey, ...withoutUndefined({ actorSecret }), generated };
  } catch (error) {
    if (error instanceof HostError) throw error;
    throw new HostError((error as Error).message, [], { cause: error });
  }
}

/** A base64 (or base64url) secret decoded; a HostError naming `name` when it is not base64. */
export function decodeBase64(name: string, text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) {
    throw new HostError(`${name} is not base64: generate one with \`openssl rand -base64 32\``);
  }
  return new Uint8Array(Buffer.from(text, /[-_]/.test(text) ? "base64url" : "base64"));
}
