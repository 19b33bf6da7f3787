import { auditOptionsOf } from "./audit-config.js";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { BODY_ENVELOPE_DEPTH, DEFAULT_MAX_BODY_DEPTH, withoutUndefined, type Manifest } from "@toolpact/contract";
import { createRuntime, silentLogger, type Logger, type RetentionOptions, type ToolpactRuntime } from "@toolpact/runtime";
import { createToolpactServer, type ToolpactServer } from "../http-server.js";
import { derivePresenceSessionSecret } from "../presence-session.js";
import { CONFIG_FILE, type HostConfig, type HostRetention } from "./config.js";
import { describeDatabase, openStore } from "./database.js";
import { HostError } from "./host-error.js";
import type { UpstreamHostOptions } from "../upstream/upstream-plugin.js";
import type { UpstreamSupervisor } from "../upstream/upstream-supervisor.js";
import { activatePlugin, loadPlugins } from "./plugins.js";
import { readSecrets } from "./secrets.js";

/** The actor token issuer `--dev` accepts when the config names none. */
export const DEV_ACTOR_ISSUER = "toolpact-dev";

/** Options of `startHost`. */
export interface StartHostOptions {
  readonly config: HostConfig;
  /** Generate throwaway secrets for any that are missing, and accept actor tokens from `toolpact-dev`. */
  readonly dev?: boolean;
  /** Where secrets are read from and removed; default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  readonly logger?: Logger;
  /**
   * Names this instance as lease owner and in PostgreSQL's `pg_stat_activity`; it must differ between
   * instances sharing a database. Default: `<hostname>/<pid>/<random>`.
   */
  readonly instanceId?: string;
  /** Told of each platform confirmation a preview over HTTP or MCP opens, with its link (`toolpact dev` prints it). */
  readonly onConfirmationRequested?: (request: ConfirmationRequested) => void;
  /** Said on the confirmation page's "Sign-in needed" page: where people find their sign-in link (`toolpact dev`: its terminal). */
  readonly confirmationSignInHint?: string;
  /** How upstream MCP servers are supervised (restart back-off, connect timeout, revision); defaults suit production. */
  readonly upstreamSupervision?: UpstreamHostOptions["supervision"];
}

/** A platform confirmation a preview opened: what `onConfirmationRequested` is told. */
export interface ConfirmationRequested {
  /** The tool as the preview named it: `<pluginId>:<name>`, with `@<version>` when the caller gave one. */
  readonly tool: string;
  readonly requestId: string;
  /** The tenant and user the request waits for. */
  readonly tenantId: string;
  readonly userId: string;
  /** The confirmation page the user approves or denies on. */
  readonly confirmUrl: string;
}

/** A started host: runtime with its plugins activated, and its HTTP server listening. */
export interface RunningHost {
  readonly url: string;
  readonly runtime: ToolpactRuntime;
  readonly server: ToolpactServer;
  /** Manifests of the loaded plugins, in config order. */
  readonly plugins: readonly Manifest[];
  /** Lines naming secrets `--dev` generated (empty otherwise). */
  readonly generatedSecrets: readonly string[];
  /** The `iss` actor tokens must carry. */
  readonly actorIssuer: string;
  /** The base URL confirmation links use (config `publicUrl`, else `http://<host>:<port>` for a fixed port). */
  readonly publicUrl: string | undefined;
  /** This instance's lease owner name. */
  readonly instanceId: string;
  /** The store it runs on, for people: `SQLite <path>` or `PostgreSQL <url without password> (schema <name>)`. */
  readonly database: string;
  /** Graceful shutdown: stop accepting, drain in-flight calls, close the runtime and store. */
  close(): Promise<void>;
}

/**
 * Starts a host: reads and removes secrets from the environment, checks them, validates every plugin
 * manifest, opens the store, creates the runtime, registers and activates the plugins (secrets are
 * gone from `process.env` by then), and starts the HTTP server.
 */
export async function startHost(options: StartHostOptions): Promise<RunningHost> {
  const { config } = options;
  const logger = options.logger ?? silentLogger;
  const secrets = readSecrets(config, options);
  const actorIssuer = config.actorIssuer ?? (options.dev ? DEV_ACTOR_ISSUER : undefined);
  if (actorIssuer === undefined) {
    throw new HostError(`"actorIssuer" is not set in ${CONFIG_FILE}: set it to the "iss" claim of your identity service's actor tokens`);
  }
  const plugins = await loadPlugins(config.plugins);
  const instanceId = options.instanceId ?? defaultInstanceId();

  const publicUrl = config.publicUrl ?? defaultPublicUrl(config.host, config.port);
  if (config.publicUrl === undefined) {
    logger.warn({
      event: "public_url_not_set",
      assumed: publicUrl ?? null,
      effect: 'confirmation links (platform mode) use this address: set "publicUrl" to the address people\'s browsers reach this server at',
    });
  }
  if (config.oauth !== undefined && config.oauth.resource === undefined && publicUrl === undefined) {
    throw new HostError(
      `"oauth" needs this server's resource identifier: set "oauth.resource" or "publicUrl" in ${CONFIG_FILE} to the https URL clients reach it at`,
    );
  }
  const store = await openStore(config, { instanceId, logger });
  const runtime = await createRuntime({
    store,
    instanceId,
    signingKeys: [...secrets.signingKeys],
    storageKey: secrets.storageKey,
    actorTokens: {
      issuer: actorIssuer,
      ...withoutUndefined({ secret: secrets.actorSecret, maxLifetimeSeconds: config.limits.actorTokenMaxLifetimeSeconds }),
      ...(config.actorJwksUrl === undefined ? {} : { jwks: new URL(config.actorJwksUrl) }),
    },
    ...withoutUndefined({
      publicUrl,
      confirmationTtlSeconds: config.limits.confirmationTtlSeconds,
      leaseMs: config.limits.leaseMs,
      drainTimeoutMs: config.limits.drainTimeoutMs,
      recoveryIntervalMs: config.limits.recoveryIntervalMs,
      rateLimits: config.limits.rateLimits,
    }),
    ...retentionOf(config.retention),
    ...auditOptionsOf(config.audit),
    ...inputLimitsOf(config),
    logger,
  }).catch(async (error: unknown) => {
    await store.close().catch(() => {});
    throw error instanceof TypeError ? new HostError(error.message, [], { cause: error }) : error;
  });

  let server: ToolpactServer | undefined;
  const upstreams: UpstreamSupervisor[] = [];
  // Upstream MCP servers stop after the server drained its calls and closed the runtime.
  const stopUpstreams = () => Promise.all(upstreams.map((upstream) => upstream.close())).then(() => undefined);
  try {
    for (const plugin of plugins) {
      for (const warning of plugin.warnings) logger.warn({ event: "manifest_warning", pluginId: plugin.manifest.id, warning });
      try {
        runtime.registerPlugin(plugin.manifest);
      } catch (error) {
        throw new HostError(`plugin "${plugin.manifest.id}" could not be registered: ${(error as Error).message}`, [], { cause: error });
      }
    }
    const upstreamOptions = { logger, env: options.env ?? process.env, ...withoutUndefined({ supervision: options.upstreamSupervision }) };
    for (const plugin of plugins) {
      const supervisor = await activatePlugin(plugin, runtime, upstreamOptions);
      if (supervisor !== undefined) upstreams.push(supervisor);
    }
    // Operations a crashed instance left running are settled now that every handler is registered;
    // the runtime's timer repeats this. A failure here is retried by that timer, not fatal.
    await runtime.settleExpiredLeases().then(
      (settled) => settled > 0 && logger.info({ event: "expired_leases_settled", settled }),
      (error: unknown) => logger.error({ event: "settling_expired_leases_failed", errorClass: (error as Error)?.constructor?.name ?? typeof error }),
    );
    server = createToolpactServer({
      runtime: options.onConfirmationRequested === undefined ? runtime : announcingConfirmations(runtime, options.onConfirmationRequested),
      adminKey: secrets.adminKey,
      host: config.host,
      port: config.port,
      maxBodyBytes: config.limits.maxBodyBytes,
      // Room for the configured input depth inside the request's envelope, checked before any parse.
      maxBodyDepth: Math.max(DEFAULT_MAX_BODY_DEPTH, (config.limits.maxInputDepth ?? 0) + BODY_ENVELOPE_DEPTH),
      ...withoutUndefined({
        drainTimeoutMs: config.limits.drainTimeoutMs,
        publicUrl,
        maxRequestsPerCaller: config.limits.maxRequestsPerCaller,
        maxLongPollsPerCaller: config.limits.maxLongPollsPerCaller,
        oauth: config.oauth,
      }),
      // Derived from the first signing key: every instance sharing the keys accepts every session.
      sessionSecret: derivePresenceSessionSecret(secrets.signingKeys[0]!.key),
      ...withoutUndefined({
        sessionTtlSeconds: config.limits.sessionTtlSeconds,
        confirmationSignInHint: options.confirmationSignInHint,
        confirmationLogin: config.confirmationLogin,
      }),
      ...(config.console.enabled ? { console: withoutUndefined({ sessionTtlSeconds: config.console.sessionTtlSeconds }) } : {}),
      // 2026-07-28 approval states: a key of their own is derived from this (HKDF), so every instance accepts them.
      mcp: { requestStateRoot: secrets.storageKey },
      logger,
    });
    const url = await server.listen().catch((error: unknown) => {
      const code = (error as { code?: unknown }).code;
      throw new HostError(
        `could not listen on ${config.host}:${config.port}${typeof code === "string" ? ` (${code})` : ""}: ` +
          'choose another port with --port or "port" in the config',
        [],
        { cause: error },
      );
    });
    const running = server;
    return {
      url,
      runtime,
      server: running,
      plugins: plugins.map((plugin) => plugin.manifest),
      generatedSecrets: secrets.generated,
      actorIssuer,
      publicUrl,
      instanceId,
      database: describeDatabase(config.database, config.databaseOptions),
      close: () => running.close().finally(stopUpstreams),
    };
  } catch (error) {
    if (server) await server.close().catch(() => {});
    else await runtime.close().catch(() => {});
    await stopUpstreams();
    throw error;
  }
}

/** The runtime as the server sees it, telling `announce` of each platform confirmation a preview opens. */
function announcingConfirmations(runtime: ToolpactRuntime, announce: (request: ConfirmationRequested) => void): ToolpactRuntime {
  const preview: ToolpactRuntime["preview"] = async (...args) => {
    const result = await runtime.preview(...args);
    const { confirmation } = result;
    if (confirmation.required && confirmation.mode === "platform") {
      const [principal, { providerId, tool, version }] = args;
      announce({
        tool: `${providerId}:${tool}${version === undefined ? "" : `@${version}`}`,
        requestId: confirmation.requestId,
        tenantId: principal.tenantId,
        userId: principal.actor.userId,
        confirmUrl: confirmation.confirmUrl,
      });
    }
    return result;
  };
  return new Proxy(runtime, {
    get: (target, key) => {
      if (key === "preview") return preview;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** `http://<host>:<port>` when the port is fixed; with port 0 the address is not known before listening. */
function defaultPublicUrl(host: string, port: number): string | undefined {
  if (port === 0) return undefined;
  const shown = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host;
  return `http://${shown}:${port}`;
}

/** Unique per process start: two instances on one machine, or one restarted, never share a lease owner. */
function defaultInstanceId(): string {
  return `${hostname()}/${process.pid}/${randomBytes(4).toString("hex")}`;
}

function retentionOf(retention: HostRetention): { retention?: RetentionOptions; idempotencyTtlMs?: number } {
  const { idempotencyHours, ...kept } = retention;
  return {
    ...(Object.keys(kept).length === 0 ? {} : { retention: kept }),
    ...withoutUndefined({ idempotencyTtlMs: idempotencyHours === undefined ? undefined : Math.round(idempotencyHours * 60 * 60 * 1000) }),
  };
}

function inputLimitsOf(config: HostConfig): { inputLimits?: { maxBytes?: number; maxDepth?: number } } {
  const { maxInputBytes, maxInputDepth } = config.limits;
  if (maxInputBytes === undefined && maxInputDepth === undefined) return {};
  return { inputLimits: withoutUndefined({ maxBytes: maxInputBytes, maxDepth: maxInputDepth }) };
}
