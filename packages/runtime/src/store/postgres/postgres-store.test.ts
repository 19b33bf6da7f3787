/** The PostgreSQL store: `createStore`, the shared contract suite, and migrations when several instances start at once. */
import { randomBytes, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { describeStoreContract, postgresTestGate } from "../../testing/index.js";
import { usePostgresHarness, tenant, timedRejection as rejection } from "../../testing/postgres-harness.js";
import { NOW, sampleOperation as operation } from "../../testing/sample-records.js";
import { createStore } from "../create-store.js";
import { POSTGRES_MIGRATIONS } from "./migrations.js";
import { createPostgresStore, migratePostgres } from "./postgres-store.js";
import type { PostgresStoreOptions } from "./settings.js";

const gate = await postgresTestGate("PostgreSQL store tests");

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
    await expect(createPostgresStore({ url: "postgres://127.0.0.1/x", poolSize: 0 })).rejects.toThrow("poolSize must be a positive integer; got 0");
  });
});

describe.skipIf(gate.skip !== undefined)("PostgreSQL store", () => {
  const { url, freshSchema, dropSchema, count, open, instances, admin, opened } = usePostgresHarness(gate);

  describeStoreContract("postgres", async () => {
    const schema = freshSchema();
    const options: PostgresStoreOptions = { url, schema, poolSize: 5 };
    return {
      store: await createPostgresStore(options),
      openPeer: () => createPostgresStore(options),
      dispose: () => dropSchema(schema),
    };
  });

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
      const tables = await admin.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name", [
        schema,
      ]);
      expect(tables.rows.map((row) => row.table_name)).toEqual([
        "activity",
        "activity_chain_heads",
        "activity_checkpoints",
        "confirmation_requests",
        "consumed_tokens",
        "grants",
        "idempotency_keys",
        "operations",
        "outbox",
        "plugin_activations",
        "plugin_installs",
        "plugin_keys",
        "runs",
        "tasks",
        "tenants",
        "toolpact_migrations",
        "used_presence_tokens",
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
});
