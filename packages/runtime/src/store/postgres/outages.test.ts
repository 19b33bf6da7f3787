/** A database that is unreachable, stalls or drops connections: STORE_UNAVAILABLE within seconds, details only in the log. */
import { Client } from "pg";
import { randomBytes, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { uuidv7 } from "../../ids.js";
import { postgresTestGate } from "../../testing/index.js";
import { usePostgresHarness, idempotency, token, tenant, closedPort, timedRejection as rejection } from "../../testing/postgres-harness.js";
import { NOW, sampleActivity as activity, sampleOperation as operation } from "../../testing/sample-records.js";
import { createTcpProxy, type TcpProxy } from "../../testing/tcp-proxy.js";
import { STORE_UNAVAILABLE_MESSAGE } from "./errors.js";
import { createPostgresStore } from "./postgres-store.js";
import type { PostgresStoreOptions } from "./settings.js";
import type { Store } from "../store.js";
import { UnansweredCommit } from "../unanswered-commit.js";

const gate = await postgresTestGate("PostgreSQL store tests");

const elapsedSince = (start: number) => performance.now() - start;

describe.skipIf(gate.skip !== undefined)("PostgreSQL store", () => {
  const { url, freshSchema, count, open, instances, proxies, urlVia, admin } = usePostgresHarness(gate);

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
        expect(entry.detail).toMatch(
          /^PostgreSQL at postgres:\/\/\S+@127\.0\.0\.1:\d+\/\S* could not .*: the database is unreachable \((ECONNRESET|ECONNREFUSED|EPIPE|Connection terminated[^)]*)\)/,
        );
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
      // the begin goes first, on the one idle connection; the others wait for new connections that never come
      const stalled = await Promise.all([
        rejection(store.beginOperation({ operation: operation(t) })),
        rejection(store.getOperation(t, randomUUID())),
        rejection(store.loadTenantConfig(t)),
      ]);
      for (const { error, ms } of stalled) {
        expect(error.code).toBe("STORE_UNAVAILABLE");
        expect(ms).toBeLessThan(2500);
      }
      for (const { error } of stalled.slice(1)) expectGeneric(error);
      // the begin was sent and no answer came: it may have committed, and with the server out of reach the
      // store cannot make sure it will not (the runtime answers OUTCOME_UNKNOWN with the operation id)
      expect(stalled[0]!.error).toBeInstanceOf(UnansweredCommit);
      expect((stalled[0]!.error as UnansweredCommit).settled).toBe(false);
      proxy.restore();
    });

    it("a write whose answer is lost after the server committed it is an UnansweredCommit the store settled; reading it back finds it", async () => {
      const { proxy, store } = await proxied();
      const t = tenant();
      const op = operation(t);
      const lost = proxy.lose("answer", "toolpact_begin");
      const { error } = await rejection(store.beginOperation({ operation: op, consumeToken: token("jti-lost") }));
      await lost;
      expect(error).toBeInstanceOf(UnansweredCommit);
      expect((error as UnansweredCommit).settled).toBe(true);
      expect(await store.getOperation(t, op.operationId)).toMatchObject({ state: "running" });
      expect(await store.findConsumedToken(t, "jti-lost")).toMatchObject({ operationId: op.operationId });

      const never = operation(t);
      const dropped = proxy.lose("request", "toolpact_begin");
      const { error: unsent } = await rejection(store.beginOperation({ operation: never }));
      await dropped;
      expect((unsent as UnansweredCommit).settled).toBe(true);
      expect(await store.getOperation(t, never.operationId)).toBeUndefined();
      // a read that loses its answer is a plain failure: there is nothing to read back
      const read = proxy.lose("answer", "toolpact_get_operation");
      const { error: unread } = await rejection(store.getOperation(t, op.operationId));
      await read;
      expectGeneric(unread);
      expect(unread).not.toBeInstanceOf(UnansweredCommit);
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
    expect(result).toEqual({
      consumedTokens: 0,
      idempotencyRecords: 0,
      activityEvents: 12_001,
      confirmations: 0,
      runs: 0,
      outboxItems: 0,
      operations: 0,
      tasks: 0,
    });
    expect(await count(`SELECT count(*) AS n FROM ${schema}.activity`)).toBe(3);
    for (const event of recent) expect(await store.listActivity(event.tenantId, { limit: 10 })).toEqual([event]);
  });
});
