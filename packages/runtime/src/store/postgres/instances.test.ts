/** Single use of token ids and idempotency keys, and lease-guarded settles, across instances sharing one database. */
import { Client } from "pg";
import { describe, expect, it } from "vitest";
import { postgresTestGate } from "../../testing/index.js";
import { usePostgresHarness, idempotency, token, tenant } from "../../testing/postgres-harness.js";
import { NOW, sampleActivity as activity, sampleOperation as operation } from "../../testing/sample-records.js";
import type { OperationBeginResult } from "../store.js";

const gate = await postgresTestGate("PostgreSQL store tests");

describe.skipIf(gate.skip !== undefined)("PostgreSQL store", () => {
  const { url, count, instances } = usePostgresHarness(gate);

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
      const results = await Promise.all(ops.map((op, i) => stores[i % 3]!.beginOperation({ operation: op, consumeToken: token("jti-shared") })));
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
      const results = await Promise.all(ops.map((op, i) => stores[i % 3]!.beginOperation({ operation: op, idempotency: idempotency(t, "shared") })));
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
});
