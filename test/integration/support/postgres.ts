/**
 * PostgreSQL for integration tests: whether to run (TOOLPACT_TEST_PG_URL), a direct client for checks,
 * and fresh schemas that are dropped afterwards. `pg` is a dependency of @toolpact/runtime only (the
 * repository root does not depend on it), so it is loaded from that package.
 */
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { postgresTestGate } from "@toolpact/runtime/testing";

/** The part of `pg.Client` these tests use (the root package has no `pg` types to import). */
interface PgClient {
  connect(): Promise<void>;
  query<T = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: T[] }>;
  end(): Promise<void>;
  on(event: "error", listener: (error: Error) => void): unknown;
}
type PgModule = { Client: new (config: { connectionString: string; connectionTimeoutMillis: number }) => PgClient };

const fromRuntime = createRequire(new URL("../../../packages/runtime/package.json", import.meta.url));
const pg = ((await import(pathToFileURL(fromRuntime.resolve("pg")).href)) as { default: PgModule }).default;

/** The database the PostgreSQL tests use, when set. */
export const PG_URL = process.env.TOOLPACT_TEST_PG_URL;

/**
 * Why a file's PostgreSQL tests are skipped (printed as one line), or undefined to run them. Under
 * CI=true nothing is skipped: an unset variable or an unreachable server makes the tests fail.
 */
export async function postgresSkipReason(what: string): Promise<string | undefined> {
  return (await postgresTestGate(what)).skip;
}

/** A direct connection for checks, and the schemas of this run (each dropped by `close`). */
export interface TestDatabase {
  readonly url: string;
  /** Host and port of the server, for a proxy in front of it. */
  readonly host: string;
  readonly port: number;
  /** A new schema name of this run (created by the first store or migrate that uses it). */
  freshSchema(): string;
  /** One query's rows. */
  rows<T = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<T[]>;
  /** A `count(*) AS n` query's number. */
  count(text: string, values?: readonly unknown[]): Promise<number>;
  /** Drops every schema this run made and disconnects. */
  close(): Promise<void>;
}

/** Connects to TOOLPACT_TEST_PG_URL. */
export async function openTestDatabase(): Promise<TestDatabase> {
  if (PG_URL === undefined) throw new Error("TOOLPACT_TEST_PG_URL is not set: PostgreSQL tests need it");
  const client: PgClient = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 5000 });
  client.on("error", () => undefined);
  await client.connect();
  const schemas = new Set<string>();
  const parsed = new URL(PG_URL);
  return {
    url: PG_URL,
    host: parsed.hostname === "" || parsed.hostname === "localhost" ? "127.0.0.1" : parsed.hostname,
    port: parsed.port === "" ? 5432 : Number(parsed.port),
    freshSchema() {
      const schema = `toolpact_it_${randomBytes(6).toString("hex")}`;
      schemas.add(schema);
      return schema;
    },
    async rows<T>(text: string, values: readonly unknown[] = []) {
      return (await client.query(text, [...values])).rows as T[];
    },
    async count(text: string, values: readonly unknown[] = []) {
      return Number((await client.query<{ n: string }>(text, [...values])).rows[0]?.n ?? Number.NaN);
    },
    async close() {
      try {
        for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end().catch(() => undefined);
      }
    },
  };
}

/** The test URL pointing at `host:port` instead (a proxy in front of the server). */
export function urlVia(url: string, host: string, port: number): string {
  const parsed = new URL(url);
  parsed.hostname = host;
  parsed.port = String(port);
  return parsed.toString();
}
