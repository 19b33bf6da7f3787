import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DEV_ACTOR_ISSUER, DEV_CONFIG_FILE, DEV_STATE_DIR } from "./actor-signing.js";
import { claimDevState } from "./dev-state-owner.js";

/** The line the dev host prints once it serves, after the keys and token (the supervisor waits for it). */
export const DEV_READY_LINE = "toolpact dev: serving";

/** Where each caller folder gets its URL, key and actor token for the dev session, as `NAME=value` lines. */
export const DEV_ENV_FILE = ".toolpact/dev.env";

/** The dev tenant's policy: reads run, writes and external effects wait for the user on the confirmation page. */
export const DEV_POLICY = {
  rules: [
    { tools: "*", effects: ["read" as const], decision: "allow" as const },
    { tools: "*", effects: ["write" as const, "external" as const], decision: "confirm" as const, mode: "platform" as const },
  ],
};

/** Where one `toolpact dev` session keeps its state. */
export interface DevSession {
  /** `<project>/.toolpact/dev` */
  readonly dir: string;
  /** The config the dev host serves with, secrets included (mode 0600). */
  readonly configFile: string;
  readonly url: string;
}

/**
 * Starts a dev session's state afresh: removes `.toolpact/dev`, generates throwaway secrets, and writes
 * the config the dev host serves with (the plugins, SQLite in that folder, the dev issuer, the secrets),
 * owner-only, with this process recorded as its owner. The caller checks first that no live
 * `toolpact dev` owns the folder (devStateOwner).
 */
export function createDevSession(options: {
  readonly cwd: string;
  readonly plugins: readonly string[];
  readonly host: string;
  readonly port: number;
}): DevSession {
  const dir = path.join(options.cwd, DEV_STATE_DIR);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  claimDevState(dir);
  const random = () => randomBytes(32).toString("base64");
  const shownHost = options.host.includes(":") ? `[${options.host}]` : options.host === "0.0.0.0" ? "127.0.0.1" : options.host;
  const url = `http://${shownHost}:${options.port}`;
  const config = {
    plugins: options.plugins,
    database: "./toolpact.db",
    host: options.host,
    port: options.port,
    publicUrl: url,
    actorIssuer: DEV_ACTOR_ISSUER,
    // A restart after a code change should not wait for long calls: they are the author's own, in a try-out.
    limits: { drainTimeoutMs: 2000 },
    secrets: {
      adminKey: randomBytes(32).toString("base64url"),
      actorSecret: random(),
      signingKeys: `dev:${random()}`,
      storageKey: random(),
    },
  };
  const configFile = path.join(dir, DEV_CONFIG_FILE);
  writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(configFile, 0o600);
  writeFileSync(path.join(dir, ".gitignore"), "*\n");
  return { dir, configFile, url };
}
