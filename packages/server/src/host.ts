import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { formatDiagnostic, loadManifest, type Manifest } from "@toolpact/contract";
import {
  checkSecrets,
  createRuntime,
  createStore,
  isPostgresUrl,
  migratePostgres,
  parseSigningKeys,
  type PluginSdk,
  type RetentionOptions,
  type SigningKey,
  type Store,
  type ToolpactRuntime,
} from "@toolpact/runtime";
import { createToolpactServer, DEFAULT_HOST, DEFAULT_MAX_BODY_BYTES, DEFAULT_PORT, type ToolpactServer } from "./http-server.js";
import { silentLogger, type Logger } from "./logger.js";
import { derivePresenceSessionSecret } from "./presence-session.js";

/** A start-up problem: bad config, a missing or weak secret, an invalid plugin. `details` lists each problem. */
export class HostError extends Error {
  override readonly name = "HostError";
  constructor(
    message: string,
    readonly details: readonly string[] = [],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The environment variables a host reads its secrets from; all are removed before any plugin loads. */
export const SECRET_ENV_VARS = [
  "TOOLPACT_ADMIN_KEY",
  "TOOLPACT_ACTOR_SECRET",
  "TOOLPACT_SIGNING_KEYS",
  "TOOLPACT_STORAGE_KEY",
  "TOOLPACT_DATABASE_URL",
] as const;

/** The default config file name, looked up in the working directory. */
export const CONFIG_FILE = "toolpact.config.json";
/** The embedded database, relative to the config file's directory. */
export const DEFAULT_DATABASE = "./.toolpact/toolpact.db";
/** The actor token issuer `--dev` accepts when the config names none. */
export const DEV_ACTOR_ISSUER = "toolpact-dev";

const secretsSchema = z.strictObject({
  adminKey: z.string().min(1).optional(),
  actorSecret: z.string().min(1).optional(),
  signingKeys: z.string().min(1).optional(),
  storageKey: z.string().min(1).optional(),
});

/** A PostgreSQL schema name the store accepts: a plain lowercase identifier. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

const databaseOptionsSchema = z.strictObject({
  schema: z
    .string()
    .regex(SCHEMA_NAME, "must be a plain lowercase identifier: letters a-z, digits and _, at most 63, not starting with a digit")
    .optional(),
  poolSize: z.number().int().min(1).max(1000).optional(),
  connectionTimeoutMs: z.number().int().min(100).max(60_000).optional(),
  statementTimeoutMs: z.number().int().min(100).max(3_600_000).optional(),
});

const retentionSchema = z.strictObject({
  activityDays: z.number().positive().max(36_500).optional(),
  confirmationHours: z.number().min(0).max(87_600).optional(),
  outboxDays: z.number().positive().max(36_500).optional(),
  idempotencyHours: z.number().positive().max(87_600).optional(),
  pruneIntervalMs: z
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 60 * 60 * 1000)
    .refine((ms) => ms === 0 || ms >= 100, "must be 0 (pruning off) or at least 100")
    .optional(),
});

const configSchema = z.strictObject({
  $schema: z.string().optional(),
  plugins: z.array(z.string().min(1)).default([]),
  database: z.string().min(1).optional(),
  databaseOptions: databaseOptionsSchema.default({}),
  host: z.string().min(1).optional(),
  port: z.number().int().min(0).max(65_535).optional(),
  publicUrl: z.url({ protocol: /^https?$/ }).optional(),
  actorIssuer: z.string().min(1).optional(),
  actorJwksUrl: z.url({ protocol: /^https?$/ }).optional(),
  limits: z
    .strictObject({
      maxBodyBytes: z.number().int().min(1024).max(64 * 1024 * 1024).optional(),
      maxInputBytes: z.number().int().min(1).max(64 * 1024 * 1024).optional(),
      maxInputDepth: z.number().int().min(1).max(1000).optional(),
      confirmationTtlSeconds: z.number().int().min(30).max(900).optional(),
      drainTimeoutMs: z.number().int().min(0).max(600_000).optional(),
      sessionTtlSeconds: z.number().int().min(60).max(3600).optional(),
      leaseMs: z.number().int().min(1000).max(600_000).optional(),
      recoveryIntervalMs: z.number().int().min(50).max(3_600_000).optional(),
      rateLimits: z
        .strictObject({
          previewsPerMinute: z.number().int().min(1).max(1_000_000).optional(),
          pendingConfirmations: z.number().int().min(1).max(100_000).optional(),
        })
        .optional(),
    })
    .default({}),
  retention: retentionSchema.default({}),
  secrets: secretsSchema.default({}),
});

/** PostgreSQL settings (`databaseOptions` in the config); they apply only when `database` is a `postgres://` URL. */
export interface DatabaseOptions {
  /** Keep every table in this schema (created if missing); default: the server's search_path. */
  readonly schema?: string;
  /** Connections each instance keeps at most (store default 10). */
  readonly poolSize?: number;
  /** Opening a connection, or waiting for a free one, before STORE_UNAVAILABLE, ms (store default 2000). */
  readonly connectionTimeoutMs?: number;
  /** How long one statement may run on the server, ms (store default 5000). */
  readonly statementTimeoutMs?: number;
}

/** How long kept rows live and how often the pruning job runs (each instance runs it; store defaults apply). */
export interface HostRetention {
  /** Activity events older than this are deleted (default 90 days). */
  readonly activityDays?: number;
  /** Confirmation requests and runs are deleted this long after they expired (default 24 h). */
  readonly confirmationHours?: number;
  /** Outbox rows not acknowledged after this are deleted (default 7 days). */
  readonly outboxDays?: number;
  /** How long an idempotency key is remembered (default 24 h). */
  readonly idempotencyHours?: number;
  /** How often this instance prunes, ms (default one hour; 0 turns pruning off). */
  readonly pruneIntervalMs?: number;
}

/** `toolpact.config.json` with every default filled in and every path absolute. */
export interface HostConfig {
  /** Plugin folders, each with a `plugin.json` and a module exporting `activate(sdk)`. */
  readonly plugins: readonly string[];
  /** An absolute SQLite file path, or a `postgres://` URL. */
  readonly database: string;
  /** PostgreSQL settings; empty for SQLite. */
  readonly databaseOptions: DatabaseOptions;
  readonly host: string;
  readonly port: number;
  readonly publicUrl?: string;
  readonly actorIssuer?: string;
  readonly actorJwksUrl?: string;
  readonly limits: {
    readonly maxBodyBytes: number;
    readonly maxInputBytes?: number;
    readonly maxInputDepth?: number;
    readonly confirmationTtlSeconds?: number;
    readonly drainTimeoutMs?: number;
    /** How long a confirmation-page session lasts, seconds (60..3600, default 600). */
    readonly sessionTtlSeconds?: number;
    /** How long an operation's lease lasts without renewal, ms (the runtime renews it while the provider runs). */
    readonly leaseMs?: number;
    /** How often this instance settles expired leases of crashed instances, ms (also once at start-up). */
    readonly recoveryIntervalMs?: number;
    /** Per caller and actor: previews per minute, platform confirmation requests pending at once. */
    readonly rateLimits?: { readonly previewsPerMinute?: number; readonly pendingConfirmations?: number };
  };
  /** Retention of kept rows and the pruning job's interval. */
  readonly retention: HostRetention;
  /** Secrets written in the file; the environment takes precedence. */
  readonly secrets: z.output<typeof secretsSchema>;
}

/** Where `loadHostConfig` looks and what the command line overrides. */
export interface LoadHostConfigOptions {
  /** Directory relative paths resolve against. */
  readonly cwd: string;
  /** A config file named on the command line: it must exist. Default: `toolpact.config.json` in `cwd`. */
  readonly file?: string;
  /** When the default config file is absent, use an empty config instead of failing (`serve --dev`, `migrate`). */
  readonly allowMissing?: boolean;
  readonly host?: string;
  readonly port?: number;
  /** Overrides `database` (and `TOOLPACT_DATABASE_URL`). */
  readonly database?: string;
  /** Default `process.env`; read for `TOOLPACT_DATABASE_URL`. */
  readonly env?: NodeJS.ProcessEnv;
}

/** Reads and checks `toolpact.config.json`; throws `HostError` listing every problem. */
export async function loadHostConfig(options: LoadHostConfigOptions): Promise<HostConfig> {
  const file = path.resolve(options.cwd, options.file ?? CONFIG_FILE);
  const shown = path.relative(options.cwd, file) || file;
  let raw: unknown = {};
  if (existsSync(file)) {
    try {
      raw = JSON.parse(await readFile(file, "utf8"));
    } catch (error) {
      throw new HostError(`${shown}: not valid JSON (${(error as Error).message}): fix the file and start again`);
    }
  } else if (options.file !== undefined || !options.allowMissing) {
    throw new HostError(
      `${shown} not found: create it (plugins, database, actorIssuer, ...) or point to one with --config; ` +
        "for a local try-out without a config run `toolpact serve --dev`",
    );
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    throw new HostError(
      `${shown} is invalid: fix the listed fields`,
      parsed.error.issues.map((issue) => `${shown}: ${issue.path.length ? issue.path.join(".") : "(root)"}: ${issue.message}`),
    );
  }
  const config = parsed.data;
  const baseDir = path.dirname(file);
  const env = options.env ?? process.env;
  const database = options.database ?? nonEmpty(env.TOOLPACT_DATABASE_URL) ?? config.database ?? DEFAULT_DATABASE;
  const databaseOptions = withoutUndefined(config.databaseOptions);
  const postgresOnly = Object.keys(databaseOptions);
  if (!isPostgresUrl(database) && postgresOnly.length > 0) {
    throw new HostError(
      `${shown}: "databaseOptions" holds PostgreSQL settings, but the database is a SQLite file: ` +
        "remove them, or set \"database\" (or TOOLPACT_DATABASE_URL) to a postgres:// URL",
      postgresOnly.map((key) => `${shown}: databaseOptions.${key}: applies to PostgreSQL only`),
    );
  }
  return {
    plugins: config.plugins.map((dir) => path.resolve(baseDir, dir)),
    database: isPostgresUrl(database) ? database : path.resolve(options.database === undefined ? baseDir : options.cwd, database),
    databaseOptions,
    host: options.host ?? config.host ?? DEFAULT_HOST,
    port: options.port ?? config.port ?? DEFAULT_PORT,
    ...optional("publicUrl", config.publicUrl),
    ...optional("actorIssuer", config.actorIssuer),
    ...optional("actorJwksUrl", config.actorJwksUrl),
    limits: {
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      ...withoutUndefined({ ...config.limits, rateLimits: undefined }),
      ...optional("rateLimits", config.limits.rateLimits === undefined ? undefined : withoutUndefined(config.limits.rateLimits)),
    },
    retention: withoutUndefined(config.retention),
    secrets: withoutUndefined(config.secrets),
  };
}

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
 * Reads secrets from the environment (first) or the config, removes every `TOOLPACT_*` secret from
 * `env`, and checks them (length, reuse). A missing secret is an error naming it; `dev` generates
 * throwaway ones instead and reports them in `generated`.
 */
export function readSecrets(config: HostConfig, options: { readonly env?: NodeJS.ProcessEnv; readonly dev?: boolean } = {}): ResolvedSecrets {
  const env = options.env ?? process.env;
  const fromEnv = Object.fromEntries(SECRET_ENV_VARS.map((name) => [name, nonEmpty(env[name])]));
  for (const name of SECRET_ENV_VARS) delete env[name];

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
  const actorText = usesJwks ? fromEnv.TOOLPACT_ACTOR_SECRET ?? config.secrets.actorSecret : pick("TOOLPACT_ACTOR_SECRET", config.secrets.actorSecret, random);
  if (actorText === undefined && !usesJwks) {
    throw missing("TOOLPACT_ACTOR_SECRET", "actorSecret", "the actor token secret (HS256)");
  }

  try {
    const signingKeys = parseSigningKeys(signingText);
    const storageKey = decodeBase64("TOOLPACT_STORAGE_KEY", storageText);
    const actorSecret = actorText === undefined ? undefined : decodeBase64("TOOLPACT_ACTOR_SECRET", actorText);
    checkSecrets({ signingKeys, storageKey, actorSecret, adminKey });
    return { adminKey, signingKeys, storageKey, ...optional("actorSecret", actorSecret), generated };
  } catch (error) {
    if (error instanceof HostError) throw error;
    throw new HostError((error as Error).message, [], { cause: error });
  }
}

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

/** A plugin folder's manifest and its `activate(sdk)`. */
interface LoadedPlugin {
  readonly dir: string;
  readonly manifest: Manifest;
  readonly moduleFile: string;
  /** Manifest warnings (valid, but e.g. keywords codegen cannot express), as `file:line:col` lines. */
  readonly warnings: readonly string[];
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
      effect: "confirmation links (platform mode) use this address: set \"publicUrl\" to the address people's browsers reach this server at",
    });
  }
  const store = await openStore(config, { instanceId, logger });
  const runtime = await createRuntime({
    store,
    instanceId,
    signingKeys: [...secrets.signingKeys],
    storageKey: secrets.storageKey,
    actorTokens: {
      issuer: actorIssuer,
      ...optional("secret", secrets.actorSecret),
      ...(config.actorJwksUrl === undefined ? {} : { jwks: new URL(config.actorJwksUrl) }),
    },
    ...optional("publicUrl", publicUrl),
    ...optional("confirmationTtlSeconds", config.limits.confirmationTtlSeconds),
    ...optional("leaseMs", config.limits.leaseMs),
    ...optional("recoveryIntervalMs", config.limits.recoveryIntervalMs),
    ...optional("rateLimits", config.limits.rateLimits),
    ...retentionOf(config.retention),
    ...inputLimitsOf(config),
    logger,
  }).catch(async (error: unknown) => {
    await store.close().catch(() => {});
    throw error instanceof TypeError ? new HostError(error.message, [], { cause: error }) : error;
  });

  let server: ToolpactServer | undefined;
  try {
    for (const plugin of plugins) {
      for (const warning of plugin.warnings) logger.warn({ event: "manifest_warning", pluginId: plugin.manifest.id, warning });
      try {
        runtime.registerPlugin(plugin.manifest);
      } catch (error) {
        throw new HostError(`plugin "${plugin.manifest.id}" could not be registered: ${(error as Error).message}`, [], { cause: error });
      }
    }
    for (const plugin of plugins) await activatePlugin(plugin, runtime);
    // Operations a crashed instance left running are settled now that every handler is registered;
    // the runtime's timer repeats this. A failure here is retried by that timer, not fatal.
    await runtime.settleExpiredLeases().then(
      (settled) => settled > 0 && logger.info({ event: "expired_leases_settled", settled }),
      (error: unknown) => logger.error({ event: "settling_expired_leases_failed", errorClass: (error as Error)?.constructor?.name ?? typeof error }),
    );
    server = createToolpactServer({
      runtime,
      adminKey: secrets.adminKey,
      host: config.host,
      port: config.port,
      maxBodyBytes: config.limits.maxBodyBytes,
      ...optional("drainTimeoutMs", config.limits.drainTimeoutMs),
      ...optional("publicUrl", publicUrl),
      // Derived from the first signing key: every instance sharing the keys accepts every session.
      sessionSecret: derivePresenceSessionSecret(secrets.signingKeys[0]!.key),
      ...optional("sessionTtlSeconds", config.limits.sessionTtlSeconds),
      logger,
    });
    const url = await server.listen().catch((error: unknown) => {
      const code = (error as { code?: unknown }).code;
      throw new HostError(
        `could not listen on ${config.host}:${config.port}${typeof code === "string" ? ` (${code})` : ""}: ` +
          "choose another port with --port or \"port\" in the config",
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
      close: () => running.close(),
    };
  } catch (error) {
    if (server) await server.close().catch(() => {});
    else await runtime.close().catch(() => {});
    throw error;
  }
}

/** What `migrateDatabase` did. */
export interface MigrationResult {
  /** The database, for people (no password): see `describeDatabase`. */
  readonly database: string;
  /** Steps applied now (PostgreSQL); undefined for SQLite, which reports no count. */
  readonly applied: number | undefined;
}

/**
 * Applies pending schema migrations to a database (`toolpact migrate`). Safe while other hosts start on
 * the same database: SQLite applies each step once in an immediate transaction, PostgreSQL under an
 * advisory lock.
 */
export async function migrateDatabase(database: string, options: DatabaseOptions = {}): Promise<MigrationResult> {
  const described = describeDatabase(database, options);
  if (isPostgresUrl(database)) {
    const applied = await migratePostgres(database, options.schema).catch((error: unknown) => {
      throw new HostError(`${described} could not be migrated: ${(error as Error).message}`, [], { cause: error });
    });
    return { database: described, applied };
  }
  const store = await openStore({ database, databaseOptions: {} }, {});
  await store.close();
  return { database: described, applied: undefined };
}

/** A database setting for people: `SQLite <path>`, or `PostgreSQL postgres://user@host:port/db (schema s)` without password or parameters. */
export function describeDatabase(database: string, options: DatabaseOptions = {}): string {
  if (!isPostgresUrl(database)) return `SQLite ${database}`;
  let shown: string;
  try {
    const url = new URL(database);
    shown = `${url.protocol}//${url.username === "" ? "" : `${url.username}@`}${url.host}${url.pathname}`;
  } catch {
    shown = "(an unparsable postgres:// URL)";
  }
  return `PostgreSQL ${shown}${options.schema === undefined ? "" : ` (schema ${options.schema})`}`;
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

/**
 * Opens (and migrates) the store `database` names; PostgreSQL gets `databaseOptions`, the instance id and
 * the logger (the details of a failed call go there; callers get a generic message).
 */
async function openStore(
  config: Pick<HostConfig, "database" | "databaseOptions">,
  extra: { readonly instanceId?: string; readonly logger?: Logger },
): Promise<Store> {
  try {
    return await createStore(config.database, {
      postgres: { ...config.databaseOptions, ...optional("instanceId", extra.instanceId), ...optional("logger", extra.logger) },
    });
  } catch (error) {
    throw new HostError(
      `the database (${describeDatabase(config.database, config.databaseOptions)}) could not be opened: ${(error as Error).message}`,
      [],
      { cause: error },
    );
  }
}

function retentionOf(retention: HostRetention): { retention?: RetentionOptions; idempotencyTtlMs?: number } {
  const { idempotencyHours, ...kept } = retention;
  return {
    ...(Object.keys(kept).length === 0 ? {} : { retention: kept }),
    ...optional("idempotencyTtlMs", idempotencyHours === undefined ? undefined : Math.round(idempotencyHours * 60 * 60 * 1000)),
  };
}

async function loadPlugins(dirs: readonly string[]): Promise<LoadedPlugin[]> {
  const plugins: LoadedPlugin[] = [];
  const problems: string[] = [];
  const seen = new Map<string, string>();
  let invalid = 0;
  for (const dir of dirs) {
    const checked = await checkPlugin(dir, seen);
    if (Array.isArray(checked)) {
      invalid++;
      problems.push(...checked);
    } else {
      seen.set(checked.manifest.id, dir);
      plugins.push(checked);
    }
  }
  if (invalid > 0) {
    throw new HostError(`${invalid === 1 ? "a plugin is" : `${invalid} plugins are`} invalid: nothing was started`, problems);
  }
  return plugins;
}

/** A plugin folder's manifest and module, or the problems that keep it from loading. */
async function checkPlugin(dir: string, seen: ReadonlyMap<string, string>): Promise<LoadedPlugin | string[]> {
  const manifestFile = path.join(dir, "plugin.json");
  if (!existsSync(manifestFile)) return [`${manifestFile}: not found: each plugin folder needs a plugin.json manifest`];
  const result = await loadManifest(manifestFile);
  if (!result.ok) return result.diagnostics.map((diagnostic) => formatDiagnostic(diagnostic));
  const moduleFile = await pluginModule(dir);
  if (moduleFile === undefined) {
    return [`${dir}: no plugin module: set "main" or "exports" in its package.json, or add index.js or dist/index.js`];
  }
  const earlier = seen.get(result.manifest.id);
  if (earlier !== undefined) {
    return [`${manifestFile}: plugin id "${result.manifest.id}" is already loaded from ${earlier}: list each plugin once`];
  }
  return { dir, manifest: result.manifest, moduleFile, warnings: result.warnings.map((warning) => formatDiagnostic(warning)) };
}

async function activatePlugin(plugin: LoadedPlugin, runtime: ToolpactRuntime): Promise<void> {
  let loaded: { activate?: unknown };
  try {
    loaded = (await import(pathToFileURL(plugin.moduleFile).href)) as { activate?: unknown };
  } catch (error) {
    throw new HostError(`plugin "${plugin.manifest.id}": loading ${plugin.moduleFile} failed: ${(error as Error).message}`, [], {
      cause: error,
    });
  }
  if (typeof loaded.activate !== "function") {
    throw new HostError(`plugin "${plugin.manifest.id}": ${plugin.moduleFile} exports no activate(sdk) function`);
  }
  const activate = loaded.activate as (sdk: PluginSdk) => unknown;
  try {
    await activate(runtime.sdkFor(plugin.manifest.id));
  } catch (error) {
    throw new HostError(`plugin "${plugin.manifest.id}": activate(sdk) failed: ${(error as Error).message}`, [], { cause: error });
  }
}

/** The module a plugin folder names: package.json `exports` or `main`, else `index.js`, else `dist/index.js`. */
async function pluginModule(dir: string): Promise<string | undefined> {
  const packageFile = path.join(dir, "package.json");
  const candidates: string[] = [];
  if (existsSync(packageFile)) {
    try {
      const pkg = JSON.parse(await readFile(packageFile, "utf8")) as { exports?: unknown; main?: unknown };
      const fromExports = exportTarget(pkg.exports);
      if (fromExports !== undefined) candidates.push(fromExports);
      if (typeof pkg.main === "string") candidates.push(pkg.main);
    } catch {
      // an unreadable package.json falls back to the conventional file names
    }
  }
  candidates.push("index.js", "dist/index.js");
  for (const candidate of candidates) {
    const file = path.resolve(dir, candidate);
    if (file.startsWith(path.resolve(dir) + path.sep) && existsSync(file)) return file;
  }
  return undefined;
}

function exportTarget(exports: unknown): string | undefined {
  if (typeof exports === "string") return exports;
  if (typeof exports !== "object" || exports === null || Array.isArray(exports)) return undefined;
  const record = exports as Record<string, unknown>;
  if ("." in record) return exportTarget(record["."]);
  for (const condition of ["import", "node", "default"]) {
    const target = exportTarget(record[condition]);
    if (target !== undefined) return target;
  }
  return undefined;
}

function inputLimitsOf(config: HostConfig): { inputLimits?: { maxBytes?: number; maxDepth?: number } } {
  const { maxInputBytes, maxInputDepth } = config.limits;
  if (maxInputBytes === undefined && maxInputDepth === undefined) return {};
  return { inputLimits: { ...optional("maxBytes", maxInputBytes), ...optional("maxDepth", maxInputDepth) } };
}

function decodeBase64(name: string, text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) {
    throw new HostError(`${name} is not base64: generate one with \`openssl rand -base64 32\``);
  }
  return new Uint8Array(Buffer.from(text, /[-_]/.test(text) ? "base64url" : "base64"));
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function withoutUndefined<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  const out: Record<string, unknown> = {};
  for (const key in value) if (value[key] !== undefined) out[key] = value[key];
  return out as { [K in keyof T]: Exclude<T[K], undefined> };
}
