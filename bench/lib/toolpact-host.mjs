// Real `toolpact serve` processes (the built CLI) for the HTTP benchmarks: a config in a temp dir, secrets
// in the environment, the tenant set up through the HTTP admin API, then more instances on the same database.
import { randomBytes } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createTRPCUntypedClient, httpLink } from "@trpc/client";
import { startProcess, stopChild } from "./processes.mjs";
import { scratchDir } from "./scratch.mjs";
import { ACTOR_ISSUER, PLUGIN_DIRS, RATE_LIMITS, mintActorToken, setUpTenant } from "./tenant.mjs";

const CLI = fileURLToPath(new URL("../../packages/cli/dist/bin.js", import.meta.url));
const SERVING = /^toolpact serving \d+ plugins? at (http:\/\/\S+)\/trpc$/;

/**
 * Starts `instances` `toolpact serve` processes on one `database` (default: a fresh SQLite file in a temp
 * dir), each on its own loopback port. `nodeArgs` go before the CLI (e.g. `--cpu-prof`); `env` adds to its environment;
 * `plugins` replaces the plugin folders (same ids as PLUGIN_DIRS).
 * Answers the URLs, the caller's credentials, the SQLite file (if any) and `stop()`.
 */
/** @param {{ database?: string | undefined, instances?: number, nodeArgs?: string[], env?: Record<string, string>, plugins?: string[] }} [options] */
export async function startToolpactHosts({ database, instances = 1, nodeArgs = [], env: extraEnv = {}, plugins = PLUGIN_DIRS } = {}) {
  const dir = await scratchDir("toolpact-host-");
  const sqliteFile = database === undefined ? path.join(dir, "toolpact.db") : undefined;
  const configFile = path.join(dir, "toolpact.config.json");
  await writeHostConfig(configFile, { plugins, database: database ?? sqliteFile });
  const { actorSecret, env: secrets } = hostSecrets();
  const adminKey = secrets.TOOLPACT_ADMIN_KEY;
  const env = { ...secrets, TOOLPACT_DATABASE_URL: "", ...extraEnv };
  const children = [];
  const start = async (index) => {
    const { child, value: url } = await startProcess({
      args: [...nodeArgs, CLI, "serve", "--config", configFile],
      env,
      cwd: dir,
      name: `toolpact serve #${index + 1} (${database === undefined ? "SQLite" : "PostgreSQL"})`,
      ready: (line) => SERVING.exec(line)?.[1],
    });
    children.push(child);
    return url;
  };
  const stop = async () => {
    await Promise.all(children.map((child) => stopChild(child, 20_000)));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const urls = [await start(0)];
    const admin = adminClient(urls[0], adminKey);
    const pluginKey = await setUpTenant(admin);
    // Later instances start on the configured database, as a scaled-out deployment does.
    for (let i = 1; i < instances; i++) urls.push(await start(i));
    return { urls, pluginKey, actorToken: mintActorToken(actorSecret), sqliteFile, children, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Writes the bench's `toolpact.config.json`: loopback, any port, the bench tenant's issuer and rate limits. */
export function writeHostConfig(file, { plugins, database }) {
  const config = {
    plugins,
    database,
    host: "127.0.0.1",
    port: 0,
    publicUrl: "http://127.0.0.1:4400",
    actorIssuer: ACTOR_ISSUER,
    limits: { rateLimits: RATE_LIMITS },
  };
  return writeFile(file, JSON.stringify(config));
}

/** Fresh secrets for one host, as its environment, and the actor secret its tokens are signed with. */
export function hostSecrets() {
  const actorSecret = randomBytes(32);
  const env = {
    TOOLPACT_ADMIN_KEY: randomBytes(32).toString("base64url"),
    TOOLPACT_ACTOR_SECRET: actorSecret.toString("base64"),
    TOOLPACT_SIGNING_KEYS: `bench:${randomBytes(32).toString("base64")}`,
    TOOLPACT_STORAGE_KEY: randomBytes(32).toString("base64"),
  };
  return { actorSecret, env };
}

/** The HTTP admin API (tRPC mutations under `admin.`) with the admin key. */
function adminClient(url, adminKey) {
  const client = createTRPCUntypedClient({ links: [httpLink({ url: `${url}/trpc`, headers: { authorization: `Bearer ${adminKey}` } })] });
  return {
    installPlugin: (tenantId, pluginId) => client.mutation("admin.installPlugin", { tenantId, pluginId }),
    setPolicy: (tenantId, policy) => client.mutation("admin.setPolicy", { tenantId, policy }),
    issuePluginKey: (tenantId, pluginId) => client.mutation("admin.issuePluginKey", { tenantId, pluginId }),
  };
}
