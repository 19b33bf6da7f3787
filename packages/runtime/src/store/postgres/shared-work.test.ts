/** Recovery, runs, confirmation requests and the outbox across instances sharing one database. */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { uuidv7 } from "../../ids.js";
import { postgresTestGate } from "../../testing/index.js";
import { usePostgresHarness, idempotency, tenant } from "../../testing/postgres-harness.js";
import {
  NOW,
  sampleActivity as activity,
  sampleConfirmation as confirmation,
  sampleOperation as operation,
  sampleSettle,
} from "../../testing/sample-records.js";
import type { OperationRecord, OperationSettle, OutboxRecord } from "../store.js";

const gate = await postgresTestGate("PostgreSQL store tests");

describe.skipIf(gate.skip !== undefined)("PostgreSQL store", () => {
  const { instances } = usePostgresHarness(gate);

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
      expect(
        await stores[2]!.ackOutbox(
          tenant(),
          again.map((item) => item.id),
        ),
      ).toBe(0);
      expect(
        await stores[2]!.ackOutbox(
          t,
          again.map((item) => item.id),
        ),
      ).toBe(5);
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
      expect(await stores[0]!.createConfirmation(confirmation(t, { createdAt: NOW + 400_000, expiresAt: NOW + 700_000 }), 5)).toEqual({ status: "created" });
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
});
