import { Client } from "pg";

/** Whether a file's PostgreSQL tests run, and if not why (printed once, as one line). */
export interface PostgresTestGate {
  /** TOOLPACT_TEST_PG_URL, when set. */
  readonly url: string | undefined;
  /** Why the tests are skipped; undefined when they run. */
  readonly skip: string | undefined;
  /** Why PostgreSQL cannot be used; set while the tests still run under CI=true, so they fail with it. */
  readonly problem: string | undefined;
}

/**
 * Decides whether PostgreSQL tests run: with TOOLPACT_TEST_PG_URL set and the server answering, yes;
 * otherwise they are skipped with one line saying how to enable them, except under CI=true, where they
 * run and fail (the line says why) rather than skip.
 */
export async function postgresTestGate(what: string, env: NodeJS.ProcessEnv = process.env): Promise<PostgresTestGate> {
  const url = env.TOOLPACT_TEST_PG_URL;
  const unreachable = url === undefined ? undefined : await probe(url);
  const problem =
    url === undefined
      ? "TOOLPACT_TEST_PG_URL is not set"
      : unreachable === undefined
        ? undefined
        : `PostgreSQL at TOOLPACT_TEST_PG_URL does not answer (${unreachable})`;
  if (problem === undefined) return { url, skip: undefined, problem: undefined };
  if (env.CI === "true") {
    console.error(`${what} run and fail under CI=true: ${problem}`);
    return { url, skip: undefined, problem };
  }
  const skip =
    url === undefined
      ? `${what} skipped: set TOOLPACT_TEST_PG_URL=postgres://postgres@127.0.0.1:5432/test to run them`
      : `${what} skipped: ${problem}; start it or unset the variable`;
  console.warn(skip);
  return { url, skip, problem };
}

/** Why PostgreSQL does not answer at `url`, or undefined when it does. */
async function probe(url: string): Promise<string | undefined> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code ?? (error as Error).message;
  } finally {
    await client.end().catch(() => undefined);
  }
}
