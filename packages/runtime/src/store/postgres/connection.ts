import { Client, Pool, type PoolClient, type PoolConfig, type QueryConfig, type QueryResult } from "pg";
import { storeClosed } from "../refusals.js";
import type { Row } from "../rows.js";
import { UnansweredCommit } from "../unanswered-commit.js";
import { failedCall, hasCode, hasSqlState, isQueryTimeout, isRetryable } from "./errors.js";
import { REFUSED_SQLSTATE } from "./migrations.js";
import { PRUNE_STATEMENT_TIMEOUT_MS, QUERY_TIMEOUT_MARGIN_MS, type PostgresSettings } from "./settings.js";
import type { Statement } from "./statements.js";

/** A client's settings: the server's statement timeout, and how long the client waits for an answer. */
export function clientConfig(settings: PostgresSettings, queryTimeoutMs: number): PoolConfig {
  return {
    connectionString: settings.url,
    connectionTimeoutMillis: settings.connectionTimeoutMs,
    statement_timeout: settings.statementTimeoutMs,
    query_timeout: queryTimeoutMs,
    // A session stuck inside a transaction (a migration whose instance froze) releases its locks.
    idle_in_transaction_session_timeout: settings.statementTimeoutMs * 2,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    application_name: settings.applicationName,
    ...(settings.schema === undefined ? {} : { options: `-c search_path=${settings.schema}` }),
  };
}

/** A single client for migrations, errors ignored until a query fails. */
export function migrationClient(settings: PostgresSettings, queryTimeoutMs: number): Client {
  const client = new Client(clientConfig(settings, queryTimeoutMs));
  client.on("error", ignore);
  return client;
}

/** How long making sure a write whose answer was lost can no longer commit may take, ms. */
const SETTLE_LOST_WRITE_MS = 1_000;

/** A named prepared statement with its values (and, when given, its own client-side timeout). */
function config(query: Statement, values: readonly unknown[], queryTimeoutMs?: number): QueryConfig<unknown[]> {
  const base: QueryConfig<unknown[]> = {
    name: query.name,
    text: query.text,
    values: values as unknown[],
    ...(query.rowMode === undefined ? {} : { rowMode: query.rowMode }),
  };
  if (queryTimeoutMs === undefined) return base;
  const withTimeout: QueryConfig<unknown[]> & { readonly query_timeout: number } = { ...base, query_timeout: queryTimeoutMs };
  return withTimeout;
}

/** Swallows what a dead connection or a closing pool reports: the next query on it fails and says so. */
export function ignore(): void {}

/**
 * This instance's pool of connections: statements and transactions with retries when the server asks
 * for them, and every failure turned into STORE_UNAVAILABLE (details to the store's logger). A write that
 * reached the server and lost its answer is an `UnansweredCommit`, thrown once the server session that
 * ran it has ended, so that it can no longer commit and reading its rows back tells whether it did.
 */
export class PostgresConnection {
  readonly #pool: Pool;
  readonly #settings: PostgresSettings;
  #closed = false;
  #closing: Promise<void> | undefined;
  /**
   * True once a connection's process id (what the server told the client) proved to be its server
   * session's (`pg_backend_pid()`): behind a pooler it is not, and a lost write's session cannot be ended.
   */
  #sessionsVisible = false;

  constructor(settings: PostgresSettings) {
    this.#settings = settings;
    // Hot-path statements: the client waits the server's statement timeout plus a margin, then gives up.
    this.#pool = new Pool({
      ...clientConfig(settings, settings.statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS),
      max: settings.poolSize,
      idleTimeoutMillis: 30_000,
    });
    // A connection that dies while idle or checked out emits "error"; the next query on it fails and is mapped.
    this.#pool.on("error", ignore);
    this.#pool.on("connect", (client) => client.on("error", ignore));
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Checks, on one pooled connection, that the process id the server gave the client is its session's
   * (not so behind a connection pooler); only then can a write whose answer was lost be settled by
   * ending its session. Failures leave it unproven.
   */
  async checkSessions(): Promise<void> {
    try {
      const client = await this.#pool.connect();
      try {
        const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
        this.#sessionsVisible = rows[0]?.pid === (client as PoolClient & { processID?: number | null }).processID;
      } finally {
        client.release();
      }
    } catch {
      this.#sessionsVisible = false;
    }
  }

  /**
   * Runs one statement (itself a transaction), retrying once or twice when the server asks to. A
   * `toolpact_refuse` abort (REFUSED_SQLSTATE) is rethrown as it is, for the caller that asked for it.
   */
  query(what: string, query: Statement, values: readonly unknown[]): Promise<QueryResult<Row>> {
    return this.#send(what, query.writes, config(query, values));
  }

  /** The rows one statement answers. */
  async rows(what: string, query: Statement, values: readonly unknown[]): Promise<Row[]> {
    return (await this.#send(what, query.writes, config(query, values))).rows;
  }

  /** Runs `work` inside BEGIN/COMMIT on one connection (rolled back if it throws), retrying a deadlock. */
  async transaction<T>(what: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const client = await this.#connect(what);
      let committing = false;
      try {
        await client.query("BEGIN");
        const result = await work(client);
        committing = true;
        await client.query("COMMIT");
        this.#release(client);
        return result;
      } catch (error) {
        // Roll back only on a connection that answered; a broken one is dropped and the server rolls back.
        if (hasSqlState(error)) await client.query("ROLLBACK").catch(ignore);
        this.#release(client, error);
        if (attempt < 2 && isRetryable(error)) continue;
        throw await this.#failure(what, error, { client, sent: committing });
      }
    }
  }

  /** Runs `query` with its values inside a transaction already begun on `client`. */
  static run(client: PoolClient, query: Statement, values: readonly unknown[]): Promise<QueryResult<Row>> {
    return client.query<Row>(config(query, values));
  }

  /** One prune chunk: off the hot path, so under PRUNE_STATEMENT_TIMEOUT_MS instead of the call timeout. */
  async pruneChunk(query: Statement, values: readonly unknown[]): Promise<number> {
    const result = await this.transaction("could not prune expired rows", async (client) => {
      await client.query(`SET LOCAL statement_timeout = ${PRUNE_STATEMENT_TIMEOUT_MS}`);
      return client.query<Row>(config(query, values, PRUNE_STATEMENT_TIMEOUT_MS + QUERY_TIMEOUT_MARGIN_MS));
    });
    return result.rowCount ?? 0;
  }

  /** Whether the database answers `query` within the connection timeout (not the statement timeout): readiness checks. */
  async answers(query: Statement): Promise<Row | undefined> {
    const result = await this.#send("did not answer a ping", false, config(query, [], this.#settings.connectionTimeoutMs));
    return result.rows[0];
  }

  /** In-flight statements finish (or time out) before the pool's connections close. */
  close(): Promise<void> {
    this.#closed = true;
    this.#closing ??= this.#pool.end().catch(ignore);
    return this.#closing;
  }

  async #send(what: string, writes: boolean, query: QueryConfig<unknown[]>): Promise<QueryResult<Row>> {
    for (let attempt = 0; ; attempt++) {
      const client = await this.#connect(what);
      try {
        const result = await client.query<Row>(query);
        this.#release(client);
        return result;
      } catch (error) {
        this.#release(client, error);
        if (attempt < 2 && isRetryable(error)) continue;
        if (hasCode(error, REFUSED_SQLSTATE)) throw error;
        throw await this.#failure(what, error, { client, sent: writes });
      }
    }
  }

  /**
   * The error a failed statement rejects with. The server's own error answer (a SQLSTATE) means it did
   * not commit; a write that was sent and then lost its connection may have: its server session is ended
   * first (not after a client-side timeout, when the server is out of reach anyway, nor behind a pooler,
   * where the session is not the client's to see), so it cannot commit later, and the caller gets an
   * UnansweredCommit saying whether that was made sure.
   */
  async #failure(what: string, error: unknown, statement: { readonly client: PoolClient; readonly sent: boolean }): Promise<Error> {
    const failure = failedCall(this.#settings, what, error);
    if (!statement.sent || hasSqlState(error)) return failure;
    const pid = (statement.client as PoolClient & { processID?: number | null }).processID ?? undefined;
    const settled = this.#sessionsVisible && !isQueryTimeout(error) && pid !== undefined && (await this.#endSession(pid));
    return new UnansweredCommit(settled, { cause: error });
  }

  /**
   * Ends the server session `pid` of this instance (if it is still there) and waits until it is gone:
   * whatever transaction it ran is then committed or rolled back for good. False when that could not be
   * made sure within SETTLE_LOST_WRITE_MS.
   */
  async #endSession(pid: number): Promise<boolean> {
    if (this.#closed) return false;
    const settings = this.#settings;
    const deadline = performance.now() + SETTLE_LOST_WRITE_MS;
    const client = new Client({
      ...clientConfig(settings, SETTLE_LOST_WRITE_MS),
      connectionTimeoutMillis: Math.min(settings.connectionTimeoutMs, SETTLE_LOST_WRITE_MS),
    });
    client.on("error", ignore);
    try {
      await client.connect();
      const mine = [pid, settings.applicationName];
      await client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1::int AND application_name = $2::text", mine);
      while (performance.now() < deadline) {
        const left = await client.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1::int AND application_name = $2::text", mine);
        if (left.rowCount === 0) return true;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return false;
    } catch {
      return false;
    } finally {
      await client.end().catch(ignore);
    }
  }

  /** A pooled connection, or STORE_UNAVAILABLE within the connection timeout. */
  async #connect(what: string): Promise<PoolClient> {
    if (this.#closed) throw storeClosed();
    try {
      return await this.#pool.connect();
    } catch (error) {
      throw failedCall(this.#settings, what, error);
    }
  }

  /** Hands a connection back; one that failed below the SQL level is dropped, so the pool opens a fresh one. */
  #release(client: PoolClient, error?: unknown): void {
    const broken = error !== undefined && !hasSqlState(error);
    client.release(broken ? (error instanceof Error ? error : new Error(String(error))) : undefined);
  }
}
