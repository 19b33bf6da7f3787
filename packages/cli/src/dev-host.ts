/**
 * The host process `toolpact dev` runs (and restarts when a plugin's code changes): `startHost` on the
 * dev config, which prints each confirmation link, and with `--setup`, once per dev session, installs the
 * plugins for the dev tenant, sets the dev policy, issues keys and mints an actor token.
 * `node dev-host.js <config file> [--setup] [--user <id>]`; stops on SIGINT, SIGTERM or the end of stdin (exit 0).
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import type { Manifest } from "@toolpact/contract";
import { HostError, loadHostConfig, startHost, type ConfirmationRequested, type RunningHost } from "@toolpact/server";
import { findActorSigning, DEV_TENANT } from "./actor-signing.js";
import { mintActorToken, mintPresenceToken } from "./commands/token.js";
import { DEV_ENV_FILE, DEV_POLICY, DEV_READY_LINE } from "./dev-session.js";
import { startTelemetry } from "./otel-sdk.js";

const { values, positionals } = parseArgs({ allowPositionals: true, options: { setup: { type: "boolean" }, user: { type: "string", default: "dev" } } });
const configFile = positionals[0]!;
const say = (line: string) => process.stdout.write(`${line}\n`);

// Before the host: the runtime looks for a registered tracer and meter provider once, when it is created.
const stopTelemetry = await startTelemetry((line) => process.stderr.write(`toolpact dev: ${line}\n`));
let host: RunningHost;
let pluginDirs: readonly string[];
try {
  const config = await loadHostConfig({ cwd: path.dirname(configFile), file: configFile, env: {} });
  pluginDirs = config.plugins;
  host = await startHost({
    config,
    env: {},
    onConfirmationRequested: (request) => void announceConfirmation(request),
    confirmationSignInHint:
      "toolpact dev printed a sign-in link for this request in its terminal, on the line that starts with " +
      '"confirm <tool> for user" and ends with /confirm/session?token=... Open that link: it signs you in for this one request ' +
      "and brings you back here. (The address your app printed is this page itself; it cannot sign you in.)",
    logger: {
      info: () => {},
      warn: (entry) => say(`warning: ${JSON.stringify(entry)}`),
      error: (entry) => process.stderr.write(`error: ${JSON.stringify(entry)}\n`),
    },
  });
} catch (error) {
  process.stderr.write(`toolpact dev: the host did not start: ${(error as Error).message}\n`);
  if (error instanceof HostError) for (const detail of error.details) process.stderr.write(`  ${detail}\n`);
  await stopTelemetry?.();
  process.exit(1);
}

if (values.setup) await setUpDevTenant(host, configFile, values.user, pluginDirs);
say(`${DEV_READY_LINE} ${host.plugins.length} plugin${host.plugins.length === 1 ? "" : "s"} at ${host.url}`);

// Stops on a signal, or when the supervisor's end of stdin closes (it is gone: no host outlives it).
await new Promise<void>((resolve) => {
  process.once("SIGINT", () => resolve());
  process.once("SIGTERM", () => resolve());
  process.stdin.on("end", () => resolve()).resume();
});
process.on("SIGINT", () => {}).on("SIGTERM", () => {}); // while draining, a second signal is the supervisor's to act on
await host.close();
await stopTelemetry?.();
process.exit(0);

/**
 * Prints a confirmation's link, signed in: toolpact dev stands in for the platform's identity service,
 * so the link carries a presence token for the user the request waits for (single-use, 10 minutes),
 * bound to that one request (`cfr`): it can neither show nor decide another.
 */
async function announceConfirmation(request: ConfirmationRequested): Promise<void> {
  const signing = findActorSigning({ cwd: path.dirname(configFile), env: {}, config: configFile });
  const subject = { issuer: signing.issuer, secret: signing.secret, tenantId: request.tenantId, userId: request.userId, ttl: 600 };
  const presence = await mintPresenceToken(subject, request.requestId);
  const { origin, pathname } = new URL(request.confirmUrl);
  const signIn = `${origin}/confirm/session?token=${presence}&next=${encodeURIComponent(pathname)}`;
  // One write for both lines, so that nothing the supervisor prints meanwhile lands between them.
  say(
    `confirm ${request.tool} for user "${request.userId}": open ${signIn}\n` +
      `  (signs you in for this request only, for 10 minutes, then shows ${request.confirmUrl}; later: toolpact token --presence --user ${request.userId})`,
  );
}

/** Installs every plugin for the dev tenant, sets the dev policy, and prints a key per plugin and an actor token. */
async function setUpDevTenant(running: RunningHost, config: string, userId: string, pluginDirs: readonly string[]): Promise<void> {
  const admin = running.runtime.admin;
  for (const plugin of running.plugins) await admin.installPlugin(DEV_TENANT, plugin.id);
  await admin.setPolicy(DEV_TENANT, DEV_POLICY);
  const signing = findActorSigning({ cwd: path.dirname(config), env: {}, config });
  const actorToken = await mintActorToken({ issuer: signing.issuer, secret: signing.secret, tenantId: DEV_TENANT, userId, ttl: 12 * 60 * 60 }, { level: 1 });
  say(`tenant "${DEV_TENANT}": every plugin installed; reads allowed, writes and external effects confirmed by the user on the confirmation page`);
  say(`actor token of user "${userId}" (12 hours; \`toolpact token --user <id>\` mints more):`);
  say(`  ACTOR_TOKEN=${actorToken}`);
  const keys = new Map<string, string>();
  for (const plugin of running.plugins) keys.set(plugin.id, (await admin.issuePluginKey(DEV_TENANT, plugin.id)).key);
  const width = Math.max(...running.plugins.map((plugin) => plugin.id.length));
  say("plugin keys:");
  for (const [pluginId, key] of keys) say(`  ${pluginId.padEnd(width)}  PLUGIN_KEY=${key}`);
  for (const [index, plugin] of running.plugins.entries()) {
    if (!callsTools(plugin)) continue;
    const variables = { TOOLPACT_URL: running.url, PLUGIN_KEY: keys.get(plugin.id)!, ACTOR_TOKEN: actorToken };
    const envFile = path.join(pluginDirs[index]!, DEV_ENV_FILE);
    mkdirSync(path.dirname(envFile), { recursive: true, mode: 0o700 });
    // Owner-only before the secrets go in: a file that exists keeps its mode through a write.
    if (existsSync(envFile)) chmodSync(envFile, 0o600);
    writeFileSync(
      envFile,
      Object.entries(variables)
        .map(([name, value]) => `${name}=${value}\n`)
        .join(""),
      { mode: 0o600 },
    );
    say(`to call as ${plugin.id} (also written to ${path.relative(process.cwd(), envFile)}):`);
    say(
      `  export ${Object.entries(variables)
        .map(([name, value]) => `${name}=${value}`)
        .join(" ")}`,
    );
  }
}

function callsTools(manifest: Manifest): boolean {
  return manifest.permissions.includes("tools:call");
}
