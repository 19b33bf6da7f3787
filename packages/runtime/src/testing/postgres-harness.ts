/**
 * What the PostgreSQL store's test files share: fresh schemas on the test database (dropped afterwards),
 * stores opened by a test and closed after it, several instances on one schema, and a few sample values.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { Client } from "pg";
import { afterAll, afterEach, beforeAll } from "vitest";
import { createPostgresStore } from "../store/postgres/postgres-store.js";
import type { PostgresStoreOptions } from "../store/postgres/settings.js";
import type { OperationBegin, Store } from "../store/store.js";
import type { PostgresTestGate } from "./postgres-test-gate.js";
import { NOW } from "./sample-records.js";
import type { TcpProxy } from "./tcp-proxy.js";

/** The helpers of one `describe` block that runs against PostgreSQL. */
export interface PostgresHarness {
  /** TOOLPACT_TEST_PG_URL. */
  readonly url: string;
  /** A connection of its own to the test database (connected before the first test). */
  readonly admin: Client;
  /** Stores a test opened itself: closed after it. */
  readonly opened: Store[];
  /** A schema name of this run; it is dropped by `dropSchema` or, at the latest, after all tests. */
  freshSchema(): string;
  dropSchema(schema: string): Promise<void>;
  /** The `n` column of the first row `sql` answers, as a number. */
  count(sql: string, values?: unknown[]): Promise<number>;
  /** A store opened for one test (closed after it). */
  open(options: Omit<PostgresStoreOptions, "url"> & { url?: string }): Promise<Store>;
  /** `n` stores on one schema, each with its own pool: separate instances of one deployment. */
  instances(n: number, schema?: string): Promise<{ schema: string; stores: Store[] }>;
  /** Proxies a test made; closed after it. */
  readonly proxies: TcpProxy[];
  /** The test URL with its host and port replaced (to go through a proxy or to nowhere). */
  urlVia(port: number, password?: string): string;
}

/** Registers the harness's set-up and clean-up in the calling `describe` block. */
export function usePostgresHarness(gate: PostgresTestGate): PostgresHarness {
  const url = gate.url!;
  const schemas = new Set<string>();
  const admin = new Client({ connectionString: url });
  admin.on("error", () => undefined);
  let connected = false;
  beforeAll(async () => {
    if (gate.problem !== undefined) throw new Error(`CI=true, but PostgreSQL cannot be used: ${gate.problem}`);
    await admin.connect();
    connected = true;
  });
  afterAll(async () => {
    if (!connected) return;
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });
  const opened: Store[] = [];
  const proxies: TcpProxy[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  });
  const freshSchema = () => {
    const schema = `toolpact_test_${randomBytes(6).toString("hex")}`;
    schemas.add(schema);
    return schema;
  };
  const open = async (options: Omit<PostgresStoreOptions, "url"> & { url?: string }) => {
    const store = await createPostgresStore({ url, ...options });
    opened.push(store);
    return store;
  };
  return {
    url,
    admin,
    opened,
    freshSchema,
    async dropSchema(schema) {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      schemas.delete(schema);
    },
    count: async (sql, values = []) => Number((await admin.query<{ n: string }>(sql, values)).rows[0]?.n),
    open,
    async instances(n, schema = freshSchema()) {
      const stores = await Promise.all(Array.from({ length: n }, (_, i) => open({ schema, poolSize: 5, instanceId: `i${i}` })));
      return { schema, stores };
    },
    proxies,
    urlVia(port, password) {
      const proxied = new URL(url);
      proxied.hostname = "127.0.0.1";
      proxied.port = String(port);
      if (password !== undefined) proxied.password = password;
      return proxied.toString();
    },
  };
}

/** An idempotency key of `tenantId`, live until `expiresAt`. */
export const idempotency = (tenantId: string, key: string, expiresAt = NOW + 86_400_000): NonNullable<OperationBegin["idempotency"]> => ({
  scope: {
    tenantId,
    callerPluginId: "com.example.caller",
    actorUserId: "user-1",
    tool: "com.example.notes:create-record@1",
    keyHash: key,
  },
  inputDigest: "digest",
  expiresAt,
});

/** A token to consume, live for five minutes from NOW. */
export const token = (tokenId: string) => ({ tokenId, consumedAt: NOW, expiresAt: NOW + 300_000 });

/** A fresh tenant id. */
export const tenant = () => `tenant-${randomUUID()}`;

/** Resolves with the rejection of `promise` and how long it took, failing the test if it resolves. */
export async function timedRejection(promise: Promise<unknown>): Promise<{ error: { code?: string; message: string }; ms: number }> {
  const start = performance.now();
  try {
    await promise;
  } catch (error) {
    return { error: error as { code?: string; message: string }, ms: performance.now() - start };
  }
  throw new Error("expected the call to reject, but it resolved");
}

/** A port on 127.0.0.1 that nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no address");
  return address.port;
}
