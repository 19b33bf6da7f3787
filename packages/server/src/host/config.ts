import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import {
  CONFIRMATION_TTL_MAX_SECONDS,
  CONFIRMATION_TTL_MIN_SECONDS,
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_MAX_LONG_POLLS_PER_CALLER,
  DEFAULT_MAX_REQUESTS_PER_CALLER,
  POSTGRES_SCHEMA_NAME_PATTERN,
  withoutUndefined,
} from "@toolpact/contract";
import { ACTOR_MAX_LIFETIME_CEILING_SECONDS, POSTGRES_POOL_DEFAULTS, RETENTION_DEFAULTS, isPostgresUrl } from "@toolpact/runtime";
import type { ConfirmationLoginOptions } from "../confirmation-login.js";
import { loginConfigSchema, loginOptionsOf } from "../confirmation-login-config.js";
import { consoleConfigSchema, type ConsoleConfig } from "../console/console-config.js";
import { DEFAULT_HOST, DEFAULT_MAX_BODY_BYTES, DEFAULT_PORT } from "../http-server.js";
import { type OAuthConfig, oauthConfigSchema } from "../oauth/oauth-config.js";
import { auditConfigSchema, type HostAudit } from "./audit-config.js";
import { HostError } from "./host-error.js";
import { readSecretVariable } from "./secret-variables.js";

/** The default config file name, looked up in the working directory. */
export const CONFIG_FILE = "toolpact.config.json";
/** The embedded database, relative to the config file's directory. */
export const DEFAULT_DATABASE = "./.toolpact/toolpact.db";

const secretsSchema = z.strictObject({
  adminKey: z.string().min(1).optional().describe("The admin credential (Authorization: Bearer <admin key>); TOOLPACT_ADMIN_KEY takes precedence."),
  actorSecret: z.string().min(1).optional().describe("Base64 HS256 secret of actor tokens; TOOLPACT_ACTOR_SECRET takes precedence."),
  signingKeys: z
    .string()
    .min(1)
    .optional()
    .describe('Confirmation signing keys, "kid1:base64,kid2:base64" (the first signs); TOOLPACT_SIGNING_KEYS takes precedence.'),
  storageKey: z.string().min(1).optional().describe("Base64 key that seals stored inputs and results; TOOLPACT_STORAGE_KEY takes precedence."),
});

/** The smallest `limits.maxBodyBytes` accepted: 1 KiB. */
const SMALLEST_BODY_LIMIT = 1024;

const databaseOptionsSchema = z.strictObject({
  schema: z
    .string()
    .regex(POSTGRES_SCHEMA_NAME_PATTERN, "must be a plain lowercase identifier: letters a-z, digits and _, at most 63, not starting with a digit")
    .optional()
    .describe("Keep every table in this PostgreSQL schema (created if missing); default: the server's search_path."),
  poolSize: z.number().int().min(1).max(1000).optional().describe(`Connections each instance keeps at most (default ${POSTGRES_POOL_DEFAULTS.poolSize}).`),
  connectionTimeoutMs: z
    .number()
    .int()
    .min(100)
    .max(60_000)
    .optional()
    .describe(`Opening or waiting for a connection before STORE_UNAVAILABLE, ms (default ${POSTGRES_POOL_DEFAULTS.connectionTimeoutMs}).`),
  statementTimeoutMs: z
    .number()
    .int()
    .min(100)
    .max(3_600_000)
    .optional()
    .describe(`How long one statement may run, ms (default ${POSTGRES_POOL_DEFAULTS.statementTimeoutMs}).`),
});

const retentionSchema = z.strictObject({
  activityDays: z
    .number()
    .positive()
    .max(36_500)
    .optional()
    .describe(`Activity events older than this are deleted (default ${RETENTION_DEFAULTS.activityDays}).`),
  confirmationHours: z
    .number()
    .min(0)
    .max(87_600)
    .optional()
    .describe(`Confirmation requests and runs are deleted this long after they expired (default ${RETENTION_DEFAULTS.confirmationHours}).`),
  outboxDays: z
    .number()
    .positive()
    .max(36_500)
    .optional()
    .describe(`Outbox rows not acknowledged after this are deleted (default ${RETENTION_DEFAULTS.outboxDays}).`),
  operationDays: z
    .number()
    .positive()
    .max(36_500)
    .optional()
    .describe(`Settled operations are deleted this long after they began (default ${RETENTION_DEFAULTS.operationDays}).`),
  idempotencyHours: z
    .number()
    .positive()
    .max(87_600)
    .optional()
    .describe(`How long an idempotency key is remembered (default ${RETENTION_DEFAULTS.idempotencyHours}).`),
  pruneIntervalMs: z
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 60 * 60 * 1000)
    .refine((ms) => ms === 0 || ms >= 100, "must be 0 (pruning off) or at least 100")
    .optional()
    .describe("How often this instance prunes, ms: 0 (off) or at least 100 (default one hour)."),
});

/** The zod schema of `toolpact.config.json`: the loader parses with it, and the shipped JSON Schema is generated from it. */
export const configSchema = z.strictObject({
  $schema: z.string().optional().describe("The JSON Schema editors check this file against: @toolpact/server/toolpact.config.schema.json."),
  plugins: z
    .array(z.string().min(1))
    .default([])
    .describe("Plugin folders, relative to this file: each holds a plugin.json and, unless it only calls tools, a module exporting activate(sdk)."),
  database: z
    .string()
    .min(1)
    .optional()
    .describe("A SQLite file path (relative to this file) or a postgres:// URL; default ./.toolpact/toolpact.db. TOOLPACT_DATABASE_URL takes precedence."),
  databaseOptions: databaseOptionsSchema.default({}).describe("PostgreSQL settings; only when database is a postgres:// URL."),
  host: z.string().min(1).optional().describe("The address to listen on (default 127.0.0.1)."),
  port: z.number().int().min(0).max(65_535).optional().describe("The port to listen on (default 4400; 0 picks a free one)."),
  publicUrl: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe("The address people's browsers reach this server at: confirmation links use it."),
  actorIssuer: z.string().min(1).optional().describe('The "iss" claim of your identity service\'s actor tokens.'),
  actorJwksUrl: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe("A JWKS URL to verify actor tokens with, instead of the HS256 actor secret: https, or http to a loopback host (unless insecure is set)."),
  insecure: z
    .boolean()
    .optional()
    .describe("Allow plain http to a non-loopback host (actorJwksUrl): keys fetched that way can be swapped on the path. Default false."),
  limits: z
    .strictObject({
      maxBodyBytes: z
        .number()
        .int()
        .min(SMALLEST_BODY_LIMIT)
        .max(64 * 1024 * 1024)
        .optional()
        .describe("Largest request body (default 1 MiB)."),
      maxInputBytes: z
        .number()
        .int()
        .min(1)
        .max(64 * 1024 * 1024)
        .optional()
        .describe("Largest tool input, as JSON bytes."),
      maxInputDepth: z.number().int().min(1).max(1000).optional().describe("Deepest nesting of a tool input."),
      confirmationTtlSeconds: z
        .number()
        .int()
        .min(CONFIRMATION_TTL_MIN_SECONDS)
        .max(CONFIRMATION_TTL_MAX_SECONDS)
        .optional()
        .describe("How long a confirmation token or request lives (default 300)."),
      drainTimeoutMs: z
        .number()
        .int()
        .min(0)
        .max(600_000)
        .optional()
        .describe(`How long shutdown waits for requests and calls in flight, ms (default ${DEFAULT_DRAIN_TIMEOUT_MS}).`),
      maxRequestsPerCaller: z
        .number()
        .int()
        .min(1)
        .max(1_000_000)
        .optional()
        .describe(`Requests one caller (plugin key) may have in flight at once; more is RATE_LIMITED (default ${DEFAULT_MAX_REQUESTS_PER_CALLER}).`),
      maxLongPollsPerCaller: z
        .number()
        .int()
        .min(1)
        .max(1_000_000)
        .optional()
        .describe(
          `Long polls (confirmations.wait, MCP streams) one caller may hold open at once; more is RATE_LIMITED (default ${DEFAULT_MAX_LONG_POLLS_PER_CALLER}).`,
        ),
      sessionTtlSeconds: z.number().int().min(60).max(3600).optional().describe("How long a confirmation-page session lasts (default 600)."),
      actorTokenMaxLifetimeSeconds: z
        .number()
        .int()
        .min(60)
        .max(ACTOR_MAX_LIFETIME_CEILING_SECONDS)
        .optional()
        .describe("The longest an actor token may live (exp - iat and exp - now), seconds (default 86400)."),
      leaseMs: z.number().int().min(1000).max(600_000).optional().describe("How long an operation's lease lasts without renewal, ms."),
      recoveryIntervalMs: z.number().int().min(50).max(3_600_000).optional().describe("How often this instance settles expired leases, ms."),
      rateLimits: z
        .strictObject({
          previewsPerMinute: z.number().int().min(1).max(1_000_000).optional().describe("Previews per caller and actor per minute."),
          pendingConfirmations: z
            .number()
            .int()
            .min(1)
            .max(100_000)
            .optional()
            .describe("Platform confirmation requests pending at once per caller and actor."),
        })
        .optional(),
    })
    .default({})
    .describe("Request, input, confirmation and timing limits."),
  retention: retentionSchema.default({}).describe("How long kept rows live, and how often the pruning job runs."),
  oauth: oauthConfigSchema,
  confirmationLogin: loginConfigSchema
    .optional()
    .describe("Sign people in on the confirmation page at the platform's OpenID provider (authorization code + PKCE)."),
  console: consoleConfigSchema,
  audit: auditConfigSchema,
  secrets: secretsSchema
    .default({})
    .describe("Secrets written in the file (better: the environment or TOOLPACT_<NAME>_FILE); the environment takes precedence."),
});

/** PostgreSQL settings (`databaseOptions` in the config); they apply only when `database` is a `postgres://` URL. */
export interface DatabaseOptions {
  /** Keep every table in this schema (created if missing); default: the server's search_path. */
  readonly schema?: string;
  /** Connections each instance keeps at most (store default 10). */
  readonly poolSize?: number;
  /** Opening a connection, or waiting for a free one, before STORE_UNAVAILABLE, ms (store default 2000). */
  readonly connectionTimeoutMs?: number;
  /** How long one statement may run on the server, ms (store default 1500). */
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
  /** Settled operations are deleted this long after they began (default 90 days; at least the idempotency hours). */
  readonly operationDays?: number;
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
    /** Requests one caller (plugin key) may have in flight at once. */
    readonly maxRequestsPerCaller?: number;
    /** Long polls one caller may hold open at once. */
    readonly maxLongPollsPerCaller?: number;
    /** How long a confirmation-page session lasts, seconds (60..3600, default 600). */
    readonly sessionTtlSeconds?: number;
    /** The longest an actor token may live, seconds (60..2592000, default 86400). */
    readonly actorTokenMaxLifetimeSeconds?: number;
    /** How long an operation's lease lasts without renewal, ms (the runtime renews it while the provider runs). */
    readonly leaseMs?: number;
    /** How often this instance settles expired leases of crashed instances, ms (also once at start-up). */
    readonly recoveryIntervalMs?: number;
    /** Per caller and actor: previews per minute, platform confirmation requests pending at once. */
    readonly rateLimits?: { readonly previewsPerMinute?: number; readonly pendingConfirmations?: number };
  };
  /** Retention of kept rows and the pruning job's interval. */
  readonly retention: HostRetention;
  /** When the activity log is checkpointed. */
  readonly audit: HostAudit;
  /** Secrets written in the file; the environment takes precedence. */
  readonly secrets: z.output<typeof secretsSchema>;
  /** OAuth 2.1 access tokens accepted (docs/oauth.md); undefined when not configured. */
  readonly oauth?: OAuthConfig;
  /** The confirmation page's sign-in at the platform's OpenID provider, client secret read. */
  readonly confirmationLogin?: ConfirmationLoginOptions;
  /** The operator console (`/console`), off unless enabled. */
  readonly console: ConsoleConfig;
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
  if (config.actorJwksUrl !== undefined && config.insecure !== true && !isSafeTransport(new URL(config.actorJwksUrl))) {
    throw new HostError(
      `${shown}: "actorJwksUrl" ${config.actorJwksUrl} is plain http to a host that is not loopback: the keys that verify actor ` +
        'tokens could be swapped on the way. Use an https URL, or set "insecure": true if this network is trusted',
    );
  }
  const baseDir = path.dirname(file);
  const env = options.env ?? process.env;
  const database = options.database ?? readSecretVariable(env, "TOOLPACT_DATABASE_URL") ?? config.database ?? DEFAULT_DATABASE;
  const databaseOptions = withoutUndefined(config.databaseOptions);
  const postgresOnly = Object.keys(databaseOptions);
  if (!isPostgresUrl(database) && postgresOnly.length > 0) {
    throw new HostError(
      `${shown}: "databaseOptions" holds PostgreSQL settings, but the database is a SQLite file: ` +
        'remove them, or set "database" (or TOOLPACT_DATABASE_URL) to a postgres:// URL',
      postgresOnly.map((key) => `${shown}: databaseOptions.${key}: applies to PostgreSQL only`),
    );
  }
  let confirmationLogin: ConfirmationLoginOptions | undefined;
  try {
    confirmationLogin =
      config.confirmationLogin === undefined ? undefined : await loginOptionsOf(config.confirmationLogin, { baseDir, insecure: config.insecure === true });
  } catch (error) {
    throw new HostError(`${shown}: ${(error as Error).message}`);
  }
  return {
    plugins: config.plugins.map((dir) => path.resolve(baseDir, dir)),
    database: isPostgresUrl(database) ? database : path.resolve(options.database === undefined ? baseDir : options.cwd, database),
    databaseOptions,
    host: options.host ?? config.host ?? DEFAULT_HOST,
    port: options.port ?? config.port ?? DEFAULT_PORT,
    ...withoutUndefined({ publicUrl: config.publicUrl, actorIssuer: config.actorIssuer, actorJwksUrl: config.actorJwksUrl }),
    limits: {
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      ...withoutUndefined({ ...config.limits, rateLimits: undefined }),
      ...withoutUndefined({ rateLimits: config.limits.rateLimits === undefined ? undefined : withoutUndefined(config.limits.rateLimits) }),
    },
    retention: withoutUndefined(config.retention),
    audit: withoutUndefined(config.audit),
    secrets: withoutUndefined(config.secrets),
    ...(config.oauth === undefined ? {} : { oauth: config.oauth }),
    ...(confirmationLogin === undefined ? {} : { confirmationLogin }),
    console: config.console,
  };
}

/** https anywhere, or http to this machine (localhost, 127.0.0.0/8, ::1). */
function isSafeTransport(url: URL): boolean {
  if (url.protocol === "https:") return true;
  const host = url.hostname;
  return host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
