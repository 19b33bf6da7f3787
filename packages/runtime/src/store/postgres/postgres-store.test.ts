import { randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { Client } from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { uuidv7 } from "../../ids.js";
import { describeStoreContract, postgresTestGate } from "../../testing/index.js";
import { createStore } from "../create-store.js";
import { POSTGRES_MIGRATIONS } from "./migrations.js";
import { STORE_UNAVAILABLE_MESSAGE } from "./errors.js";
import { createPostgresStore, migratePostgres } from "./postgres-store.js";
import type { PostgresStoreOptions } from "./settings.js";
import {
  NOW,
  sampleActivity as activity,
  sampleConfirmation as confirmation,
  sampleOperation as operation,
  sampleSettle,
} from "../../testing/sample-records.js";
import type {
  OperationBegin,
  OperationBeginResult,
  OperationRecord,
  OperationSettle,
  OutboxRecord,
  Store,
} from "../store.js";
import { createTcpProxy, type TcpProxy } from "../../testing/tcp-proxy.js";

const gate = await postgresTestGate("PostgreSQL store tests");
const PG_URL = gate.url;

const idempotency = (tenantId: string, key: string, expiresAt = NOW + 86_400_000): NonNullable<OperationBegin["idempotency"]> => ({
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

const token = (tokenId: string) => ({ tokenId, consumedAt: NOW, expiresAt: NOW + 300_000 });
const tenant = () => `tenant-${randomUUID()}`;
const elapsedSince = (start: number) => performance.now() - start;

/** Resolves with the rejection of `promise` and how long it took, failing the test if it resolves. */
async function rejection(promise: Promise<unknown>): Promise<{ error: { code?: string; message: string }; ms: number }> {
  const start = performance.now();
  try {
    await promise;
  } catch (error) {
    return { error: error as { code?: string; message: string }, ms: elapsedSince(start) };
  }
  throw new Error("expected the call to reject, but it resolved");
}

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no address");
  return address.port;
}

/** The test URL with its host and port replaced (to go through a proxy or to nowhere). */
function urlVia(port: number, password?: string): string {
  const url = new URL(PG_URL!);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  if (password !== undefined) url.password = password;
  return url.toString();
}

describe("createStore", () => {
  it("opens SQLite for a path and refuses an empty setting or another URL scheme", async () => {
    const store = await createStore(":memory:");
    expect(store.kind).toBe("sqlite");
    expect(await store.ping()).toBe(true);
    await store.close();
    await expect(createStore("  ")).rejects.toThrow(/database setting is empty/);
    await expect(createStore("mysql://root:pw@db/toolpact")).rejects.toThrow(
      'database "mysql://..." is not supported: use a postgres:// or postgresql:// URL, or a SQLite file path',
    );
  });

  it("refuses a schema that is not a plain identifier and a URL that is not PostgreSQL's", async () => {
    await expect(createPostgresStore({ url: "postgres://127.0.0.1/x", schema: "x; DROP TABLE y" })).rejects.toThrow(
      /schema "x; DROP TABLE y" is not a plain lowercase identifier/,
    );
    await expect(createPostgresStore({ url: "http://user:secret@127.0.0.1/x" })).rejects.toThrow(
      'the PostgreSQL store needs a postgres:// or postgresql:// URL; got "http://user@127.0.0.1/x"',
    );
    await expect(createPostgresStore({ url: "postgres://127.0.0.1/x", poolSize: 0 })).rejects.toThrow(
      "poolSize must be a positive integer; got 0",
    );
  });
});

describe.skipIf(gate.skip !== undefined)("PostgreSQL store", () => {
  const url = PG_URL!;
  const schemas = new Set<string>();
  let admin: Client;

  beforeAll(async () => {
    if (gate.problem !== undefined) throw new Error(`CI=true, but PostgreSQL cannot be used: ${gate.problem}`);
    admin = new Client({ connectionString: url });
    admin.on("error", () => undefined);
    await admin.connect();
  });

  afterAll(async () => {
    if (admin === undefined) return;
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  /** A schema name of this run; it is dropped by `dropSchema` or, at the latest, after all tests. */
  function freshSchema(): string {
    const schema = `toolpact_test_${randomBytes(6).toString("hex")}`;
    schemas.add(schema);
    return schema;
  }

  async function dropSchema(schema: string): Promise<void> {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    schemas.delete(schema);
  }

  async function count(sql: string, values: unknown[] = []): Promise<number> {
    return Number((await admin.query<{ n: string }>(sql, values)).rows[0]?.n);
  }

  describeStoreContract("postgres", async () => {
    const schema = freshSchema();
    const options: PostgresStoreOptions = { url, schema, poolSize: 5 };
    return {
      store: await createPostgresStore(options),
      openPeer: () => createPostgresStore(options),
      dispose: () => dropSchema(schema),
    };
  });

  // Stores opened by one test, closed after it.
  const opened: Store[] = [];
  const proxies: TcpProxy[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  });

  async function open(options: Omit<PostgresStoreOptions, "url"> & { url?: string }): Promise<Store> {
    const store = await createPostgresStore({ url, ...options });
    opened.push(store);
    return store;
  }

  /** `n` stores on one schema, each with its own pool: separate instances of one deployment. */
  async function instances(n: number, schema = freshSchema()): Promise<{ schema: string; stores: Store[] }> {
    const stores = await Promise.all(Array.from({ length: n }, (_, i) => open({ schema, poolSize: 5, instanceId: `i${i}` })));
    return { schema, stores };
  }

  describe("migrations", () => {
    it("five instances starting together on a fresh schema apply each step once", async () => {
      const schema = freshSchema();
      const results = await Promise.allSettled(Array.from({ length: 5 }, () => open({ schema, poolSize: 2 })));
      expect(results.map((result) => result.status)).toEqual(Array(5).fill("fulfilled"));
      const rows = await admin.query<{ version: number; n: string }>(
        `SELECT version, count(*) AS n FROM ${schema}.toolpact_migrations GROUP BY version ORDER BY version`,
      );
      expect(rows.rows.map((row) => [row.version, Number(row.n)])).toEqual(POSTGRES_MIGRATIONS.map((step) => [step.version, 1]));
      expect(await migratePostgres(url, schema)).toBe(0);
      for (const result of results) if (result.status === "fulfilled") expect(await result.value.ping()).toBe(true);
    });

    it("migratePostgres creates the schema and every table in it, and the store writes only there", async () => {
      const schema = freshSchema();
      expect(await migratePostgres(url, schema)).toBe(POSTGRES_MIGRATIONS.length);
      const tables = await admin.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name",
        [schema],
      );
      expect(tables.rows.map((row) => row.table_name)).toEqual([
        "activity",
        "confirmation_requests",
        "consumed_tokens",
        "idempotency_keys",
        "operations",
        "outbox",
        "plugin_activations",
        "plugin_installs",
        "plugin_keys",
        "runs",
        "tenants",
        "toolpact_migrations",
      ]);
      const store = await createStore(url, { postgres: { schema } });
      opened.push(store);
      expect(store.kind).toBe("postgres");
      const keyId = `key-${randomUUID()}`;
      await store.insertPluginKey({ keyId, tenantId: tenant(), pluginId: "p", keyHash: new Uint8Array(32), createdAt: NOW });
      expect(await count(`SELECT count(*) AS n FROM ${schema}.plugin_keys WHERE key_id = $1`, [keyId])).toBe(1);
    });

    it("refuses a database whose schema is newer than this code", async () => {
      const schema = freshSchema();
      await migratePostgres(url, schema);
      await admin.query(`INSERT INTO ${schema}.toolpact_migrations (version, name, applied_at) VALUES (999, 'future', 0)`);
      const { error } = await rejection(createPostgresStore({ url, schema }));
      expect(error.code).toBe("STORE_UNAVAILABLE");
      expect(error.message).toContain("the database schema is at version 999, newer than this toolpact knows");
    });

    it("names each instance's connections after its instanceId", async () => {
      const instanceId = `node-${randomBytes(4).toString("hex")}`;
      const store = await open({ schema: freshSchema(), instanceId });
      expect(await store.ping()).toBe(true);
      expect(await count("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1", [`toolpact/${instanceId}`])).toBe(1);
    });

    it("keeps sealed payloads as bytea and times as bigint, read back as bytes and numbers", async () => {
      const { schema, stores } = await instances(1);
      const columns = await admin.query<{ column_name: string; data_type: string }>(
        `SELECT column_name, data_type FROM information_schema.columns
         WHERE table_schema = $1 AND table_name = 'operations' AND column_name IN ('sealed_input', 'created_at', 'lease_expires_at')
         ORDER BY column_name`,
        [schema],
      );
      expect(columns.rows).toEqual([
        { column_name: "created_at", data_type: "bigint" },
        { column_name: "lease_expires_at", data_type: "bigint" },
        { column_name: "sealed_input", data_type: "bytea" },
      ]);
      const t = tenant();
      const sealed = new Uint8Array(randomBytes(300));
      const op = operation(t, { sealedInput: sealed.subarray(10, 250), createdAt: 8_000_000_000_123 });
      await stores[0]!.beginOperation({ operation: op });
      const read = await stores[0]!.getOperation(t, op.operationId);
      expect(read?.createdAt).toBe(8_000_000_000_123);
      expect(Buffer.from(read!.sealedInput!).equals(Buffer.from(sealed.subarray(10, 250)))).toBe(true);
    });
  });

  describe("guarantees across instances", () => {
    const statuses = (results: readonly OperationBeginResult[]) => {
      const tally: Record<string, number> = {};
      for (const result of results) tally[result.status] = (tally[result.status] ?? 0) + 1;
      return tally;
    };

    it("60 concurrent begins with one token id on three instances: exactly one starts", async () => {
      const { schema, stores } = await instances(3);
      const t = tenant();
      const ops = Array.from({ length: 60 }, () => operation(t));
      const results = await Promise.all(
        ops.map((op, i) => stores[i % 3]!.beginOperation({ operation: op, consumeToken: token("jti-shared") })),
      );
      expect(statuses(results)).toEqual({ started: 1, "token-used": 59 });
      const winner = ops[results.findIndex((result) => result.status === "started")]!;
      for (const result of results) {
        if (result.status === "token-used") expect(result.consumed.operationId).toBe(winner.operationId);
      }
      expect(await count(`SELECT count(*) AS n FROM ${schema}.operations WHERE tenant_id = $1`, [t])).toBe(1);
      expect(await count(`SELECT count(*) AS n FROM ${schema}.consumed_tokens WHERE tenant_id = $1`, [t])).toBe(1);
    });

    it("60 concurrent begins with one idempotency key on three instances: exactly one starts", async () => {
      const { schema, stores } = await instances(3);
      const t = tenant();
      const ops = Array.from({ length: 60 }, () => operation(t));
      const results = await Promise.all(
        ops.map((op, i) => stores[i % 3]!.beginOperation({ operation: op, idempotency: idempotency(t, "shared") })),
      );
      expect(statuses(results)).toEqual({ started: 1, "idempotency-exists": 59 });
      const winner = ops[results.findIndex((result) => result.status === "started")]!;
      for (const result of results) {
        if (result.status === "idempotency-exists") {
          expect(result.record).toMatchObject({ operationId: winner.operationId, state: "running", inputDigest: "digest" });
        }
      }
      expect(await count(`SELECT count(*) AS n FROM ${schema}.operations WHERE tenant_id = $1`, [t])).toBe(1);
    });

    it("a used token keeps every loser's idempotency key free (the whole begin rolls back)", async () => {
      const { schema, stores } = await instances(3);
      const t = tenant();
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          stores[i % 3]!.beginOperation({ operation: operation(t), consumeToken: token("jti-one"), idempotency: idempotency(t, `key-${i}`) }),
        ),
      );
      expect(statuses(results)).toEqual({ started: 1, "token-used": 59 });
      expect(await count(`SELECT count(*) AS n FROM ${schema}.idempotency_keys WHERE tenant_id = $1`, [t])).toBe(1);
      expect(await count(`SELECT count(*) AS n FROM ${schema}.operations WHERE tenant_id = $1`, [t])).toBe(1);
      const loser = results.findIndex((result) => result.status === "token-used");
      const retry = await stores[0]!.beginOperation({ operation: operation(t), idempotency: idempotency(t, `key-${loser}`) });
      expect(retry).toEqual({ status: "started" });
    });

    it("a taken idempotency key consumes none of the losers' tokens", async () => {
      const { schema, stores } = await instances(3);
      const t = tenant();
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          stores[i % 3]!.beginOperation({ operation: operation(t), consumeToken: token(`jti-${i}`), idempotency: idempotency(t, "one-key") }),
        ),
      );
      expect(statuses(results)).toEqual({ started: 1, "idempotency-exists": 59 });
      expect(await count(`SELECT count(*) AS n FROM ${schema}.consumed_tokens WHERE tenant_id = $1`, [t])).toBe(1);
      const loser = results.findIndex((result) => result.status === "idempotency-exists");
      expect(await stores[1]!.findConsumedToken(t, `jti-${loser}`)).toBeUndefined();
      const retry = await stores[2]!.beginOperation({ operation: operation(t), consumeToken: token(`jti-${loser}`) });
      expect(retry).toEqual({ status: "started" });
    });

    it("an expired idempotency key is taken again by exactly one of many concurrent begins", async () => {
      const { stores } = await instances(3);
      const t = tenant();
      await stores[0]!.beginOperation({ operation: operation(t), idempotency: idempotency(t, "old", NOW + 1000) });
      const later = Array.from({ length: 30 }, () => operation(t, { createdAt: NOW + 5000 }));
      const results = await Promise.all(
        later.map((op, i) => stores[i % 3]!.beginOperation({ operation: op, idempotency: idempotency(t, "old", NOW + 60_000) })),
      );
      expect(statuses(results)).toEqual({ started: 1, "idempotency-exists": 29 });
      const winner = later[results.findIndex((result) => result.status === "started")]!;
      expect((await stores[1]!.findIdempotency(idempotency(t, "old").scope, NOW + 5001))?.operationId).toBe(winner.operationId);
    });

    it("one operation settles once when instances race to settle it, with one activity event", async () => {
      const { stores } = await instances(3);
      const t = tenant();
      const op = operation(t);
      await stores[0]!.beginOperation({ operation: op, idempotency: idempotency(t, "settle-race") });
      const results = await Promise.allSettled(
        Array.from({ length: 21 }, (_, i) =>
          stores[i % 3]!.settleOperation({
            tenantId: t,
            operationId: op.operationId,
            leaseOwner: op.leaseOwner,
            leaseEpoch: op.leaseEpoch,
            state: i % 2 === 0 ? "succeeded" : "unknown",
            settledAt: NOW + 10,
            activity: activity(t, { operationId: op.operationId }),
            idempotency: { scope: idempotency(t, "settle-race").scope, sealedResult: new Uint8Array([i]) },
          }),
        ),
      );
      const settled = results.flatMap((result, i) => (result.status === "fulfilled" && result.value === "settled" ? [i] : []));
      expect(settled).toHaveLength(1);
      for (const result of results) {
        if (result.status === "rejected") expect(result.reason).toMatchObject({ code: "OUTCOME_UNKNOWN" });
      }
      expect(results.filter((result) => result.status === "rejected")).toHaveLength(20);
      expect(await stores[2]!.listActivity(t, { limit: 100 })).toHaveLength(1);
      const winner = settled[0]!;
      const record = await stores[1]!.findIdempotency(idempotency(t, "settle-race").scope, NOW);
      expect(record?.state).toBe(winner % 2 === 0 ? "succeeded" : "unknown");
      expect([...(record?.sealedResult ?? [])]).toEqual([winner]);
    });

    it("a begin waits for a config change in flight and then refuses to start under the old version", async () => {
      const { schema, stores } = await instances(2);
      const t = tenant();
      await stores[0]!.installPlugin(t, "com.example.notes", NOW);
      const changer = new Client({ connectionString: url });
      await changer.connect();
      try {
        // Another instance's config change, not yet committed.
        await changer.query("BEGIN");
        await changer.query(`UPDATE ${schema}.tenants SET config_version = config_version + 1 WHERE tenant_id = $1`, [t]);
        const stale = operation(t);
        let settled = false;
        const pending = stores[1]!.beginOperation({ operation: stale, tenantConfigVersion: 1, consumeToken: token("jti-cfg") });
        void pending.finally(() => (settled = true));
        await new Promise((resolve) => setTimeout(resolve, 150));
        expect(settled).toBe(false);
        await changer.query("COMMIT");
        expect(await pending).toEqual({ status: "config-changed", version: 2 });
        expect(await stores[0]!.getOperation(t, stale.operationId)).toBeUndefined();
        expect(await stores[0]!.findConsumedToken(t, "jti-cfg")).toBeUndefined();
      } finally {
        await changer.end();
      }
      expect(await stores[0]!.beginOperation({ operation: operation(t), tenantConfigVersion: 2 })).toEqual({ status: "started" });
    });

    it("a lease has one owner: another instance's settle or renewal changes nothing", async () => {
      const { stores } = await instances(2);
      const t = tenant();
      const op = operation(t, { leaseOwner: "instance-a", leaseEpoch: 3 });
      await stores[0]!.beginOperation({ operation: op });
      const settle = {
        tenantId: t,
        operationId: op.operationId,
        state: "succeeded" as const,
        settledAt: NOW + 1,
        activity: activity(t),
      };
      expect(await stores[1]!.renewLeases("instance-b", [{ tenantId: t, operationId: op.operationId, leaseEpoch: 3 }], NOW + 99_000)).toBe(0);
      expect(await stores[1]!.settleOperation({ ...settle, leaseOwner: "instance-b", leaseEpoch: 3 })).toBe("lease-lost");
      expect(await stores[1]!.settleOperation({ ...settle, leaseOwner: "instance-a", leaseEpoch: 2 })).toBe("lease-lost");
      expect(await stores[1]!.getOperation(t, op.operationId)).toMatchObject({ state: "running", leaseExpiresAt: NOW + 30_000 });
      expect(await stores[1]!.listActivity(t, { limit: 10 })).toEqual([]);
      expect(await stores[1]!.settleOperation({ ...settle, leaseOwner: "instance-a", leaseEpoch: 3 })).toBe("settled");
    });
  });

  describe("recovery, runs, confirmations and the outbox across instances", () => {
    const settleOf = (op: OperationRecord, overrides: Partial<OperationSettle> = {}): OperationSettle =>
      sampleSettle(op, activity(op.tenantId, { operationId: op.operationId }), overrides);

    const outboxItem = (op: OperationRecord, i: number): OutboxRecord => ({
      tenantId: op.tenantId,
      id: uuidv7(NOW + i),
      operationId: op.operationId,
      tool: op.tool,
      hook: "com.example.hooks:notify",
      kind: "notify",
      sealedPayload: new Uint8Array(randomBytes(48)),
      createdAt: NOW + i,
      attempts: 0,
    });

    it("an expired lease is taken over by exactly one of many instances, and the old owner can no longer settle", async () => {
      const { stores } = await instances(3);
      const t = tenant();
      const op = operation(t, { leaseOwner: "dead-instance", leaseEpoch: 1, leaseExpiresAt: NOW + 1000 });
      await stores[0]!.beginOperation({ operation: op });
      expect((await stores[1]!.listExpiredLeases(NOW + 999, 100)).map((o) => o.operationId)).not.toContain(op.operationId);
      expect((await stores[1]!.listExpiredLeases(NOW + 1000, 100)).map((o) => o.operationId)).toContain(op.operationId);

      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          stores[i % 3]!.takeLease({
            tenantId: t,
            operationId: op.operationId,
            leaseEpoch: 1,
            owner: `instance-${i}`,
            now: NOW + 2000,
            expiresAt: NOW + 32_000,
          }),
        ),
      );
      const taken = results.filter((record) => record !== undefined);
      expect(taken).toHaveLength(1);
      expect(taken[0]).toMatchObject({ leaseEpoch: 2, leaseExpiresAt: NOW + 32_000, recoveryAttempts: 1, state: "running" });
      const owner = taken[0]!.leaseOwner;
      expect(await stores[0]!.listExpiredLeases(NOW + 2000, 100)).toEqual([]);
      expect(
        await stores[0]!.takeLease({ tenantId: t, operationId: op.operationId, leaseEpoch: 2, owner: "late", now: NOW + 2000, expiresAt: NOW + 9e9 }),
      ).toBeUndefined();

      expect(await stores[0]!.settleOperation(settleOf(op))).toBe("lease-lost");
      expect(await stores[2]!.settleOperation(settleOf(op, { leaseOwner: owner, leaseEpoch: 2, state: "unknown" }))).toBe("settled");
    });

    it("a settle commits its extra events and outbox rows with it, and a lost lease writes none of them", async () => {
      const { stores } = await instances(2);
      const t = tenant();
      const op = operation(t);
      await stores[0]!.beginOperation({ operation: op, idempotency: idempotency(t, "extras") });
      const extra = [
        activity(t, { kind: "hook", phase: "execute", outcome: "failed", errorClass: "TypeError", seam: "com.example.hooks:notify" }),
        activity(t, { kind: "call", outcome: "succeeded", seam: "guard" }),
      ];
      const outbox = [outboxItem(op, 1), outboxItem(op, 2)];

      expect(await stores[1]!.settleOperation(settleOf(op, { leaseOwner: "thief", extraActivity: extra, outbox }))).toBe("lease-lost");
      expect(await stores[1]!.listActivity(t, { limit: 10 })).toEqual([]);
      expect(await stores[1]!.claimOutbox(t, { limit: 10, now: NOW, claimUntil: NOW + 1000 })).toEqual([]);

      const settle = settleOf(op, { extraActivity: extra, outbox, idempotency: { sealedResult: new Uint8Array([7]) } });
      expect(await stores[1]!.settleOperation(settle)).toBe("settled");
      const events = await stores[0]!.listActivity(t, { limit: 10 });
      expect(events).toHaveLength(3);
      expect(events).toEqual(expect.arrayContaining([settle.activity, ...extra]));
      const claimed = await stores[0]!.claimOutbox(t, { limit: 10, now: NOW, claimUntil: NOW + 1000 });
      const comparable = (item: OutboxRecord) => ({ ...item, sealedPayload: [...item.sealedPayload] });
      expect(claimed.map(comparable)).toEqual(outbox.map((item) => comparable({ ...item, attempts: 1, claimedUntil: NOW + 1000 })));
      // Recovery settles without knowing the key: the record is found by operation id.
      const record = await stores[0]!.findIdempotency(idempotency(t, "extras").scope, NOW);
      expect(record).toMatchObject({ state: "succeeded", operationId: op.operationId });
      expect([...(record?.sealedResult ?? [])]).toEqual([7]);
    });

    it("each outbox row goes to one claimer at a time across instances, again after its claim lapses, until acked", async () => {
      const { stores } = await instances(3);
      const t = tenant();
      const op = operation(t);
      await stores[0]!.beginOperation({ operation: op });
      const outbox = Array.from({ length: 30 }, (_, i) => outboxItem(op, i));
      await stores[0]!.settleOperation(settleOf(op, { outbox }));

      const claims = await Promise.all(Array.from({ length: 12 }, (_, i) => stores[i % 3]!.claimOutbox(t, { limit: 4, now: NOW, claimUntil: NOW + 5000 })));
      const ids = claims.flatMap((claim) => claim.map((item) => item.id));
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBe(30);
      for (const claim of claims) expect(claim.map((item) => item.id)).toEqual([...claim.map((item) => item.id)].sort());
      expect(await stores[1]!.claimOutbox(t, { limit: 10, now: NOW + 4999, claimUntil: NOW + 9000 })).toEqual([]);
      expect(await stores[1]!.claimOutbox(tenant(), { limit: 10, now: NOW + 9999, claimUntil: NOW + 20_000 })).toEqual([]);

      const again = await stores[1]!.claimOutbox(t, { limit: 5, now: NOW + 5000, claimUntil: NOW + 10_000 });
      expect(again.map((item) => [item.id, item.attempts])).toEqual(outbox.slice(0, 5).map((item) => [item.id, 2]));
      expect(await stores[2]!.ackOutbox(tenant(), again.map((item) => item.id))).toBe(0);
      expect(await stores[2]!.ackOutbox(t, again.map((item) => item.id))).toBe(5);
      const rest = await stores[2]!.claimOutbox(t, { limit: 100, now: NOW + 20_000, claimUntil: NOW + 30_000 });
      expect(rest.map((item) => item.id)).toEqual(outbox.slice(5).map((item) => item.id));
    });

    it("pending confirmations stay within maxPending per caller and actor when instances create them at once", async () => {
      const { stores } = await instances(3);
      const t = tenant();
      const records = Array.from({ length: 30 }, (_, i) => confirmation(t, { expiresAt: NOW + 300_000 + i }));
      const results = await Promise.all(records.map((record, i) => stores[i % 3]!.createConfirmation(record, 5)));
      const created = results.flatMap((result, i) => (result.status === "created" ? [records[i]!] : []));
      expect(created).toHaveLength(5);
      const oldest = Math.min(...created.map((record) => record.expiresAt));
      for (const result of results) if (result.status === "rate-limited") expect(result.retryAt).toBe(oldest);
      // Another actor has its own allowance; an expired pending request no longer counts.
      expect(await stores[0]!.createConfirmation(confirmation(t, { actorUserId: "user-2" }), 5)).toEqual({ status: "created" });
      expect(
        await stores[0]!.createConfirmation(confirmation(t, { createdAt: NOW + 400_000, expiresAt: NOW + 700_000 }), 5),
      ).toEqual({ status: "created" });
    });

    it("a pending confirmation is decided once when instances race, with one activity event", async () => {
      const { stores } = await instances(3);
      const t = tenant();
      const record = confirmation(t);
      await stores[0]!.createConfirmation(record, 10);
      const outcomes = ["approved", "denied", "cancelled"] as const;
      const results = await Promise.all(
        Array.from({ length: 15 }, (_, i) =>
          stores[i % 3]!.transitionConfirmation({
            tenantId: t,
            requestId: record.requestId,
            to: outcomes[i % 3]!,
            at: NOW + 100,
            when: "live",
            ...(outcomes[i % 3] === "approved" ? { tokenExpiresAt: NOW + 400_000 } : {}),
            activity: activity(t, { kind: "confirmation", phase: "approve", outcome: "approved", confirmationId: record.requestId }),
          }),
        ),
      );
      const applied = results.filter((result) => result !== undefined);
      expect(applied).toHaveLength(1);
      expect(applied[0]).toMatchObject({ status: expect.stringMatching(/approved|denied|cancelled/), decidedAt: NOW + 100 });
      expect(applied[0]?.sealedPreview).toBeUndefined();
      expect(await stores[1]!.getConfirmation(t, record.requestId)).toEqual(applied[0]);
      expect(await stores[1]!.listActivity(t, { limit: 100 })).toHaveLength(1);
    });

    it("expiry applies only to pending requests past their expiry, and live decisions only before it", async () => {
      const { stores } = await instances(2);
      const t = tenant();
      const record = confirmation(t, { expiresAt: NOW + 1000 });
      await stores[0]!.createConfirmation(record, 10);
      const base = { tenantId: t, requestId: record.requestId, at: NOW + 999 } as const;
      expect(await stores[1]!.transitionConfirmation({ ...base, to: "expired", when: "expired" })).toBeUndefined();
      expect(await stores[1]!.listExpiredConfirmations(NOW + 999, 10)).toEqual([]);
      expect((await stores[1]!.listExpiredConfirmations(NOW + 1000, 10)).map((r) => r.requestId)).toContain(record.requestId);
      expect(await stores[1]!.transitionConfirmation({ ...base, at: NOW + 1000, to: "approved", when: "live" })).toBeUndefined();
      expect(await stores[1]!.transitionConfirmation({ ...base, at: NOW + 1000, to: "expired", when: "expired" })).toMatchObject({
        status: "expired",
      });
      expect(await stores[0]!.transitionConfirmation({ ...base, at: NOW + 1001, to: "expired", when: "expired" })).toBeUndefined();
    });

    it("keeps runs, activations and the recovery policy, and prunes expired confirmations, runs and old outbox rows", async () => {
      const { stores } = await instances(2);
      const t = tenant();
      await stores[0]!.insertRun({
        tenantId: t,
        runId: "run-1",
        callerPluginId: "com.example.caller",
        actorUserId: "user-1",
        allow: ["com.example.notes:*", "com.example.mailer:send@1"],
        createdAt: NOW,
        expiresAt: NOW + 1000,
      });
      expect(await stores[1]!.getRun(t, "run-1")).toEqual({
        tenantId: t,
        runId: "run-1",
        callerPluginId: "com.example.caller",
        actorUserId: "user-1",
        allow: ["com.example.notes:*", "com.example.mailer:send@1"],
        createdAt: NOW,
        expiresAt: NOW + 1000,
      });
      const closes = await Promise.all([stores[0]!.closeRun(t, "run-1", NOW + 5), stores[1]!.closeRun(t, "run-1", NOW + 6)]);
      expect(closes.filter(Boolean)).toHaveLength(1);
      expect(await stores[0]!.closeRun(tenant(), "run-1", NOW)).toBe(false);

      await stores[0]!.setActivation(
        { tenantId: t, pluginId: "com.example.hooks", gates: [], hooks: ["notify", "audit"], guards: ["redact"] },
        activity(t, { kind: "policy", phase: "change" }),
      );
      await stores[1]!.setRecoveryPolicy(t, '{"retry":[]}', activity(t, { kind: "policy", phase: "change" }));
      expect(await stores[0]!.loadTenantConfig(t, 1)).toEqual({
        tenantId: t,
        version: 2,
        plugins: [],
        recoveryPolicy: '{"retry":[]}',
        activations: [{ pluginId: "com.example.hooks", gates: [], hooks: ["notify", "audit"], guards: ["redact"] }],
      });
      expect(await stores[0]!.loadTenantConfig(t, 2)).toBeUndefined();

      const op = operation(t);
      await stores[0]!.beginOperation({ operation: op });
      await stores[0]!.settleOperation(settleOf(op, { outbox: [outboxItem(op, 0)] }));
      await stores[0]!.createConfirmation(confirmation(t, { expiresAt: NOW + 1000 }), 10);
      // An approved request is kept while its token may still be used.
      const approved = confirmation(t, { expiresAt: NOW + 1000 });
      await stores[0]!.createConfirmation(approved, 10);
      await stores[0]!.transitionConfirmation({
        tenantId: t,
        requestId: approved.requestId,
        to: "approved",
        at: NOW + 1,
        when: "live",
        tokenExpiresAt: NOW + 5000,
      });
      const kept = { now: NOW, activityBefore: 0 };
      expect(await stores[1]!.prune(kept)).toMatchObject({ confirmations: 0, runs: 0, outboxItems: 0 });
      const pruned = await stores[1]!.prune({ ...kept, confirmationsExpiredBefore: NOW + 1000, outboxBefore: NOW + 10 });
      expect(pruned).toMatchObject({ confirmations: 1, runs: 1, outboxItems: 1 });
      expect(await stores[0]!.getRun(t, "run-1")).toBeUndefined();
      expect(await stores[0]!.getConfirmation(t, approved.requestId)).toMatchObject({ status: "approved", tokenExpiresAt: NOW + 5000 });
    });
  });

  describe("outages", () => {
    /** What the store logged: the details callers never see. */
    let logged: Record<string, unknown>[] = [];
    const logger = { error: (entry: Readonly<Record<string, unknown>>) => void logged.push({ ...entry }) };
    /** The password of every proxied URL: it must never reach a caller or the log. */
    const PASSWORD = `pw-${randomBytes(6).toString("hex")}`;

    async function proxied(options: Omit<PostgresStoreOptions, "url"> = {}): Promise<{ proxy: TcpProxy; store: Store }> {
      logged = [];
      const target = new URL(url);
      const proxy = await createTcpProxy({ targetHost: target.hostname, targetPort: Number(target.port || 5432) });
      proxies.push(proxy);
      const store = await open({ schema: freshSchema(), logger, ...options, url: urlVia(proxy.port, PASSWORD) });
      return { proxy, store };
    }

    /** A caller's view of a failure: the generic message, nothing about the database. */
    function expectGeneric(error: { code?: string; message: string }): void {
      expect(error.code).toBe("STORE_UNAVAILABLE");
      expect(error.message).toBe(STORE_UNAVAILABLE_MESSAGE);
      expect(JSON.stringify(error)).not.toMatch(/127\.0\.0\.1|postgres:|SQLSTATE|ECONN/);
    }

    it("a cut link fails every call with STORE_UNAVAILABLE within 2 s, and the same store recovers", async () => {
      const { proxy, store } = await proxied();
      const t = tenant();
      const before = operation(t);
      expect(await store.beginOperation({ operation: before })).toEqual({ status: "started" });

      proxy.cut();
      const calls: Promise<unknown>[] = [
        store.getOperation(t, before.operationId),
        store.beginOperation({ operation: operation(t), consumeToken: token("jti-cut") }),
        store.beginOperation({ operation: operation(t), consumeToken: token("jti-cut-2"), idempotency: idempotency(t, "k") }),
        store.loadTenantConfig(t),
        store.appendActivity(activity(t)),
        store.listActivity(t, { limit: 5 }),
        store.settleOperation({
          tenantId: t,
          operationId: before.operationId,
          leaseOwner: before.leaseOwner,
          leaseEpoch: before.leaseEpoch,
          state: "succeeded",
          settledAt: NOW,
          activity: activity(t),
        }),
      ];
      const failures = await Promise.all(calls.map(rejection));
      for (const { error, ms } of failures) {
        expectGeneric(error);
        expect(ms).toBeLessThan(2000);
      }
      // the operator's log has what happened and where, but not the password
      expect(logged.length).toBeGreaterThanOrEqual(calls.length);
      for (const entry of logged) {
        expect(entry).toMatchObject({ event: "store_unavailable", store: "postgres", reason: "unreachable" });
        expect(entry.detail).toMatch(/^PostgreSQL at postgres:\/\/\S+@127\.0\.0\.1:\d+\/\S* could not .*: the database is unreachable \((ECONNRESET|ECONNREFUSED|EPIPE|Connection terminated[^)]*)\)/);
      }
      expect(JSON.stringify(logged)).not.toContain(PASSWORD);
      const pingStart = performance.now();
      expect(await store.ping()).toBe(false);
      expect(elapsedSince(pingStart)).toBeLessThan(2000);

      proxy.restore();
      const after = operation(t);
      expect(await store.beginOperation({ operation: after, consumeToken: token("jti-cut") })).toEqual({ status: "started" });
      expect(await store.getOperation(t, before.operationId)).toMatchObject({ state: "running" });
      expect(await store.ping()).toBe(true);
    });

    it("begins in flight when the link is cut either start with their ledger row or fail STORE_UNAVAILABLE", async () => {
      const { proxy, store } = await proxied();
      const t = tenant();
      const ops = Array.from({ length: 40 }, () => operation(t));
      const start = performance.now();
      const pending = ops.map((op, i) =>
        store.beginOperation({ operation: op, consumeToken: token(`jti-${i}`), ...(i % 2 === 0 ? { idempotency: idempotency(t, `k${i}`) } : {}) }),
      );
      await new Promise((resolve) => setTimeout(resolve, 3));
      proxy.cut();
      const results = await Promise.allSettled(pending);
      expect(elapsedSince(start)).toBeLessThan(2000);
      proxy.restore();
      for (const [i, result] of results.entries()) {
        if (result.status === "fulfilled") {
          expect(result.value).toEqual({ status: "started" });
          expect(await store.getOperation(t, ops[i]!.operationId)).toMatchObject({ state: "running" });
        } else {
          expect(result.reason).toMatchObject({ code: "STORE_UNAVAILABLE" });
        }
      }
    });

    it("a database that stops answering fails calls within the timeouts instead of hanging, then recovers", async () => {
      const { proxy, store } = await proxied({ statementTimeoutMs: 1000, connectionTimeoutMs: 1000 });
      const t = tenant();
      await store.appendActivity(activity(t));

      proxy.stall();
      const onIdleConnection = await rejection(store.listActivity(t, { limit: 5 }));
      expectGeneric(onIdleConnection.error);
      expect(logged[0]).toMatchObject({ reason: "unreachable", detail: expect.stringContaining("Query read timeout") });
      expect(onIdleConnection.ms).toBeLessThan(2000);
      const many = await Promise.all(Array.from({ length: 12 }, () => rejection(store.getOperation(t, randomUUID()))));
      for (const { error, ms } of many) {
        expect(error.code).toBe("STORE_UNAVAILABLE");
        expect(ms).toBeLessThan(2000);
      }

      const pingStart = performance.now();
      expect(await store.ping()).toBe(false);
      expect(elapsedSince(pingStart)).toBeLessThan(2000);

      proxy.restore();
      expect(await store.listActivity(t, { limit: 5 })).toHaveLength(1);
      expect(await store.ping()).toBe(true);

      proxy.stall();
      const closeStart = performance.now();
      await store.close();
      expect(elapsedSince(closeStart)).toBeLessThan(2000);
    });

    it("a held row lock fails a settle at the statement timeout, and the connection stays usable", async () => {
      const schema = freshSchema();
      logged = [];
      const store = await open({ schema, statementTimeoutMs: 400, poolSize: 1, logger });
      const t = tenant();
      const op = operation(t);
      await store.beginOperation({ operation: op });
      const locker = new Client({ connectionString: url });
      await locker.connect();
      try {
        await locker.query("BEGIN");
        await locker.query(`SELECT 1 FROM ${schema}.operations WHERE operation_id = $1 FOR UPDATE`, [op.operationId]);
        const settle = {
          tenantId: t,
          operationId: op.operationId,
          leaseOwner: op.leaseOwner,
          leaseEpoch: op.leaseEpoch,
          state: "succeeded" as const,
          settledAt: NOW,
          activity: activity(t),
        };
        const { error, ms } = await rejection(store.settleOperation(settle));
        expectGeneric(error);
        expect(logged).toEqual([
          expect.objectContaining({ reason: "statement_timeout", code: "57014", detail: expect.stringContaining("ran past its statement timeout") }),
        ]);
        expect(ms).toBeLessThan(1500);
        await locker.query("ROLLBACK");
        expect(await store.settleOperation(settle)).toBe("settled");
      } finally {
        await locker.end();
      }
    });

    it("with default timeouts, a database that stops answering fails a call within about two seconds", async () => {
      const { proxy, store } = await proxied();
      const t = tenant();
      await store.appendActivity(activity(t));
      proxy.stall();
      const stalled = await Promise.all([
        rejection(store.getOperation(t, randomUUID())),
        rejection(store.beginOperation({ operation: operation(t) })),
        rejection(store.loadTenantConfig(t)),
      ]);
      for (const { error, ms } of stalled) {
        expectGeneric(error);
        expect(ms).toBeLessThan(2500);
      }
      proxy.restore();
    });

    it("answers a statement the server refused with the generic message; the driver's message goes to the log", async () => {
      const { store } = await proxied();
      const key = { keyId: `key-${randomUUID()}`, tenantId: tenant(), pluginId: "p", keyHash: new Uint8Array(32), createdAt: NOW };
      await store.insertPluginKey(key);
      const { error } = await rejection(store.insertPluginKey(key));
      expectGeneric(error);
      expect(logged).toEqual([
        expect.objectContaining({
          event: "store_unavailable",
          reason: "error",
          code: "23505",
          detail: expect.stringMatching(/could not store a plugin key: duplicate key value .* \(SQLSTATE 23505\); the row conflicts/),
        }),
      ]);
      expect(JSON.stringify(logged)).not.toContain(PASSWORD);
    });

    it("an unreachable or silent database fails at open within the connection timeout, without the password", async () => {
      const nowhere = await rejection(createPostgresStore({ url: urlVia(await closedPort(), "s3cret-pw") }));
      expect(nowhere.error.code).toBe("STORE_UNAVAILABLE");
      expect(nowhere.error.message).toContain("ECONNREFUSED");
      expect(nowhere.error.message).toContain("127.0.0.1");
      expect(nowhere.error.message).not.toContain("s3cret-pw");
      expect(nowhere.ms).toBeLessThan(2000);

      const target = new URL(url);
      const proxy = await createTcpProxy({ targetHost: target.hostname, targetPort: Number(target.port || 5432) });
      proxies.push(proxy);
      proxy.stall();
      const silent = await rejection(createPostgresStore({ url: urlVia(proxy.port), connectionTimeoutMs: 800 }));
      expect(silent.error.code).toBe("STORE_UNAVAILABLE");
      expect(silent.ms).toBeGreaterThanOrEqual(700);
      expect(silent.ms).toBeLessThan(2000);
    });
  });

  it("prunes in chunks across tenants: old activity goes, recent stays", async () => {
    const { schema, stores } = await instances(1);
    const store = stores[0]!;
    const tenants = [tenant(), tenant(), tenant()];
    const ids: string[] = [];
    const owners: string[] = [];
    const ats: number[] = [];
    for (let i = 0; i < 12_001; i++) {
      const at = NOW - 1_000_000 + (i % 1000);
      ids.push(uuidv7(at));
      owners.push(tenants[i % 3]!);
      ats.push(at);
    }
    await admin.query(
      `INSERT INTO ${schema}.activity (tenant_id, id, at, kind, phase, outcome)
       SELECT t, id, at, 'call', 'execute', 'succeeded' FROM unnest($1::text[], $2::text[], $3::int8[]) AS r(t, id, at)`,
      [owners, ids, ats],
    );
    const recent = tenants.map((t) => activity(t, { at: NOW }));
    for (const event of recent) await store.appendActivity(event);

    const result = await store.prune({ now: NOW, consumedTokensExpiredBefore: NOW, activityBefore: NOW - 1000 });
    expect(result).toEqual({ consumedTokens: 0, idempotencyRecords: 0, activityEvents: 12_001, confirmations: 0, runs: 0, outboxItems: 0 });
    expect(await count(`SELECT count(*) AS n FROM ${schema}.activity`)).toBe(3);
    for (const event of recent) expect(await store.listActivity(event.tenantId, { limit: 10 })).toEqual([event]);
  });
});
