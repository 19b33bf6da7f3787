import type { Logger } from "../../logger.js";
import { SCHEMA_NAME } from "./migrations.js";

/**
 * The pool's defaults: their one home (the options below, the HTTP host's config schema and
 * docs/operating.md's table follow it; a test compares the doc).
 */
export const POSTGRES_POOL_DEFAULTS = Object.freeze({ poolSize: 10, connectionTimeoutMs: 2000, statementTimeoutMs: 1500 });

/** Options of `createPostgresStore`. */
export interface PostgresStoreOptions {
  /** A `postgres://` or `postgresql://` connection URL. */
  readonly url: string;
  /** Keep every table in this schema (created if missing): a plain lowercase identifier. Default: the server's search_path. */
  readonly schema?: string;
  /** Connections this instance keeps at most (default 10). */
  readonly poolSize?: number;
  /** How long opening a connection, or waiting for a free one, may take before STORE_UNAVAILABLE (default 2000 ms). */
  readonly connectionTimeoutMs?: number;
  /**
   * How long one call's statement may run on the server; the client gives up 500 ms later, so a database
   * that stopped answering fails a call within about two seconds by default (default 1500 ms). Pruning
   * and migrations have longer timeouts of their own.
   */
  readonly statementTimeoutMs?: number;
  /** Names this instance's connections in `pg_stat_activity` (application_name `toolpact/<instanceId>`). */
  readonly instanceId?: string;
  /**
   * Where the details of a failure go (address, SQLSTATE, the driver's message; never the password).
   * Callers only ever get "the store is unavailable; try again shortly". Default: nowhere.
   */
  readonly logger?: Pick<Logger, "error">;
}

/** The options with every default filled in, and what messages and logs need of the URL. */
export interface PostgresSettings {
  readonly url: string;
  /** The URL without its password, for messages. */
  readonly where: string;
  readonly schema: string | undefined;
  readonly poolSize: number;
  readonly connectionTimeoutMs: number;
  readonly statementTimeoutMs: number;
  readonly applicationName: string;
  /** The URL's password, to scrub from anything logged (undefined when it has none). */
  readonly password: string | undefined;
  readonly logger: Pick<Logger, "error"> | undefined;
}

/** How long a migration statement may take. */
export const MIGRATION_QUERY_TIMEOUT_MS = 60_000;
/** How long one prune statement may run: it deletes up to PRUNE_CHUNK rows, off the hot path. */
export const PRUNE_STATEMENT_TIMEOUT_MS = 30_000;
/** The client-side margin over the server's statement timeout, for a server that stopped answering. */
export const QUERY_TIMEOUT_MARGIN_MS = 500;
/** The largest page `listActivity` asks for (PostgreSQL's LIMIT is a 32-bit integer here). */
export const MAX_LIMIT = 2_147_483_647;
/** Rows one prune statement deletes at most, so each stays short under the statement timeout. */
export const PRUNE_CHUNK = 5000;

/** Checks the options and fills in defaults. @throws TypeError naming a bad option. */
export function resolveSettings(options: PostgresStoreOptions): PostgresSettings {
  if (!/^postgres(ql)?:\/\//i.test(options.url)) {
    throw new TypeError(`the PostgreSQL store needs a postgres:// or postgresql:// URL; got "${redact(options.url)}"`);
  }
  if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
    throw new TypeError(`schema "${options.schema}" is not a plain lowercase identifier: use letters a-z, digits and _ (at most 63)`);
  }
  const positive = (name: string, value: number | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    if (!Number.isInteger(value) || value <= 0) throw new TypeError(`${name} must be a positive integer; got ${value}`);
    return value;
  };
  const instance = options.instanceId === undefined ? "" : `/${options.instanceId.replace(/[^\x20-\x7e]/g, "?")}`;
  return {
    url: options.url,
    where: redact(options.url),
    schema: options.schema,
    poolSize: positive("poolSize", options.poolSize, POSTGRES_POOL_DEFAULTS.poolSize),
    connectionTimeoutMs: positive("connectionTimeoutMs", options.connectionTimeoutMs, POSTGRES_POOL_DEFAULTS.connectionTimeoutMs),
    statementTimeoutMs: positive("statementTimeoutMs", options.statementTimeoutMs, POSTGRES_POOL_DEFAULTS.statementTimeoutMs),
    applicationName: `toolpact${instance}`.slice(0, 63),
    password: passwordOf(options.url),
    logger: options.logger,
  };
}

function passwordOf(url: string): string | undefined {
  try {
    const password = new URL(url).password;
    return password === "" ? undefined : password;
  } catch {
    return undefined;
  }
}

/** `postgres://user@host:port/db`: the URL without password or parameters. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username === "" ? "" : `${parsed.username}@`;
    return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`;
  } catch {
    return "(an unparsable URL)";
  }
}
