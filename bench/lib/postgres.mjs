// Fresh PostgreSQL databases for the durable benchmarks: one per measured configuration, dropped afterwards.
import pg from "pg";

/** The server the bench uses unless BENCH_POSTGRES_URL names another (trust auth on loopback). */
export const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

let sequence = 0;

async function withClient(url, action) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    return await action(client);
  } finally {
    await client.end();
  }
}

/** The server's version string, or undefined (with the reason) when it cannot be reached. */
export async function postgresVersion(url = POSTGRES_URL) {
  try {
    return { version: await withClient(url, async (client) => (await client.query("SHOW server_version")).rows[0].server_version) };
  } catch (error) {
    return { error: error.message };
  }
}

/** Creates an empty database on the server of `url`; answers its URL and `drop()`. */
export async function createFreshDatabase(url = POSTGRES_URL) {
  const name = `toolpact_bench_${process.pid}_${Date.now().toString(36)}_${sequence++}`;
  await withClient(url, (client) => client.query(`CREATE DATABASE "${name}"`));
  const target = new URL(url);
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
    name,
    drop: () => withClient(url, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)),
  };
}

/** Runs one query against the database at `url` and answers its rows. */
export function queryRows(url, text, values = []) {
  return withClient(url, async (client) => (await client.query(text, values)).rows);
}
