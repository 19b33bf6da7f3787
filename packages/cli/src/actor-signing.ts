import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { assertOwnerOnly, CredentialFileError, readCredentialFile } from "./credential-safety.js";
import { devStateOwner } from "./dev-state-owner.js";

/** Where `toolpact dev` keeps its throwaway state (config with secrets, SQLite file), relative to the project. */
export const DEV_STATE_DIR = ".toolpact/dev";
/** The config `toolpact dev` writes and serves with. */
export const DEV_CONFIG_FILE = "toolpact.config.json";
/** The tenant `toolpact dev` installs the plugins for. */
export const DEV_TENANT = "dev";
/** The actor token issuer `toolpact serve --dev` and `toolpact dev` accept (the server's DEV_ACTOR_ISSUER). */
export const DEV_ACTOR_ISSUER = "toolpact-dev";

const ACTOR_SECRET = "TOOLPACT_ACTOR_SECRET";
/** The shortest HS256 actor secret accepted, in bytes (the server refuses shorter ones too). */
export const MIN_ACTOR_SECRET_BYTES = 32;

/** How actor and presence tokens are signed, and where that came from. */
export interface ActorSigning {
  readonly issuer: string;
  readonly secret: Uint8Array;
  /** For people: `TOOLPACT_ACTOR_SECRET`, `toolpact.config.json`, ... */
  readonly source: string;
  /** The tenant to default to: set only for a running `toolpact dev`'s secret. */
  readonly devTenant?: string;
}

/**
 * Finds the actor secret as `toolpact serve` reads it: `TOOLPACT_ACTOR_SECRET`, the file
 * `TOOLPACT_ACTOR_SECRET_FILE` names, or the config's `secrets.actorSecret`; failing those, the one a
 * `toolpact dev` in `cwd` generated, while that `toolpact dev` runs. A file holding the secret must be
 * readable by its owner alone, and the secret at least 32 bytes.
 * @throws Error saying which secret is missing, stale, too short or too widely readable, and what to do.
 */
export function findActorSigning(options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv; readonly config?: string }): ActorSigning {
  const configFile = path.resolve(options.cwd, options.config ?? "toolpact.config.json");
  if (options.config !== undefined && !existsSync(configFile)) throw new Error(`${options.config} not found: point --config at a toolpact.config.json`);
  const config = existsSync(configFile) ? readConfig(configFile) : undefined;
  const issuer = config?.actorIssuer ?? DEV_ACTOR_ISSUER;

  const fromEnv = readEnvSecret(options.env);
  if (fromEnv !== undefined) return { issuer, secret: decodeSecret(fromEnv.source, fromEnv.value), source: fromEnv.source };
  if (config?.secrets?.actorSecret !== undefined) {
    const shown = path.relative(options.cwd, configFile) || configFile;
    assertOwnerOnly(configFile, "the actor secret", shown);
    const source = `"secrets.actorSecret" in ${shown}`;
    return { issuer, secret: decodeSecret(source, config.secrets.actorSecret), source };
  }
  const devConfig = path.join(options.cwd, DEV_STATE_DIR, DEV_CONFIG_FILE);
  if (existsSync(devConfig)) {
    const owner = devStateOwner(path.dirname(devConfig));
    if (!owner.alive) {
      throw new Error(
        `the secret in ${path.join(DEV_STATE_DIR, DEV_CONFIG_FILE)} is stale: the \`toolpact dev\` that made it` +
          `${owner.pid === undefined ? "" : ` (pid ${owner.pid})`} is no longer running, so no server accepts its tokens; ` +
          "start `toolpact dev` in this folder again (it replaces the stale state), or set TOOLPACT_ACTOR_SECRET",
      );
    }
    assertOwnerOnly(devConfig, "the dev session's secrets", path.join(DEV_STATE_DIR, DEV_CONFIG_FILE));
    const dev = readConfig(devConfig);
    if (dev.secrets?.actorSecret !== undefined) {
      const source = `the running \`toolpact dev\` (${path.join(DEV_STATE_DIR, DEV_CONFIG_FILE)})`;
      return { issuer: dev.actorIssuer ?? DEV_ACTOR_ISSUER, secret: decodeSecret(source, dev.secrets.actorSecret), source, devTenant: DEV_TENANT };
    }
  }
  throw new Error(
    `the actor token secret is not set: set ${ACTOR_SECRET} (or ${ACTOR_SECRET}_FILE, or "secrets.actorSecret" in ` +
      `${path.relative(options.cwd, configFile) || configFile}) to the secret your server verifies actor tokens with, ` +
      "or start `toolpact dev` in this folder and mint tokens for it",
  );
}

interface ConfigSecrets {
  readonly actorIssuer?: string;
  readonly secrets?: { readonly actorSecret?: string };
}

function readConfig(file: string): ConfigSecrets {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${file}: not valid JSON (${(error as Error).message}): fix the file`);
  }
  const record = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>) : {};
  const secrets = typeof record.secrets === "object" && record.secrets !== null ? (record.secrets as Record<string, unknown>) : {};
  return {
    ...(typeof record.actorIssuer === "string" ? { actorIssuer: record.actorIssuer } : {}),
    secrets: typeof secrets.actorSecret === "string" ? { actorSecret: secrets.actorSecret } : {},
  };
}

/** `TOOLPACT_ACTOR_SECRET`, or the contents of the file `TOOLPACT_ACTOR_SECRET_FILE` names (trailing line breaks dropped). */
function readEnvSecret(env: NodeJS.ProcessEnv): { value: string; source: string } | undefined {
  const value = nonEmpty(env[ACTOR_SECRET]);
  const file = nonEmpty(env[`${ACTOR_SECRET}_FILE`]);
  if (file === undefined) return value === undefined ? undefined : { value, source: ACTOR_SECRET };
  if (value !== undefined) throw new Error(`both ${ACTOR_SECRET} and ${ACTOR_SECRET}_FILE are set: set one of them`);
  let text: string;
  try {
    text = readCredentialFile(file, "the actor secret");
  } catch (error) {
    if (error instanceof CredentialFileError) throw error;
    const code = (error as { code?: unknown }).code;
    throw new Error(
      `${ACTOR_SECRET}_FILE names ${file}, which cannot be read${typeof code === "string" ? ` (${code})` : ""}: point it at the file holding the secret`,
    );
  }
  const secret = nonEmpty(text.replace(/[\r\n]+$/, ""));
  if (secret === undefined) throw new Error(`${ACTOR_SECRET}_FILE names ${file}, which is empty: write the secret into it`);
  return { value: secret, source: `${ACTOR_SECRET}_FILE (${file})` };
}

/** Decodes a secret as the server does: base64, or base64url when it holds `-` or `_`. */
function decodeSecret(source: string, text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text))
    throw new Error(`the actor secret from ${source} is not base64: it must be the server's own, as it is configured`);
  const secret = new Uint8Array(Buffer.from(text, /[-_]/.test(text) ? "base64url" : "base64"));
  if (secret.length < MIN_ACTOR_SECRET_BYTES) {
    throw new Error(
      `the actor secret from ${source} is ${secret.length} byte${secret.length === 1 ? "" : "s"} long; HS256 needs at least ${MIN_ACTOR_SECRET_BYTES}: ` +
        "generate one with `openssl rand -base64 32` and configure the server with it too",
    );
  }
  return secret;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
