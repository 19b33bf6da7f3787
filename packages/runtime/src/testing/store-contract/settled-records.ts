/** A read's operation written once, settled, and pruning settled operations: part of the store contract suite. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { uuidv7 } from "../../ids.js";
import type { OperationRecord, OutboxRecord } from "../../store/store.js";
import { NOW, sampleOperation } from "../sample-records.js";
import type { StoreContractKit } from "./kit.js";

/** A read's operation as it is written: already settled. */
function settled(tenantId: string, overrides: Partial<OperationRecord> = {}): OperationRecord {
  return sampleOperation(tenantId, {
    tool: "com.example.notes:search-records@1",
    state: "succeeded",
    settledAt: NOW + 5,
    leaseExpiresAt: NOW + 5,
    ...overrides,
  });
}

/** Registers the tests of operations written settled, and of their retention. */
export function describeSettledRecords(kit: StoreContractKit): void {
  const { open, activity, settleOf, tenant } = kit;

  describe("operations written settled (reads)", () => {
    it("writes the operation settled with its event, extra events and outbox rows, in one transaction", async () => {
      const { store } = await open();
      const t = tenant();
      const op = settled(t, { state: "failed", errorCode: "PROVIDER_FAILED" });
      const event = activity(t, { operationId: op.operationId, outcome: "failed", errorCode: "PROVIDER_FAILED" });
      const hookEvent = activity(t, { operationId: op.operationId, kind: "hook", outcome: "failed", seam: "h:h" });
      const staged: OutboxRecord = {
        tenantId: t,
        id: uuidv7(NOW),
        operationId: op.operationId,
        tool: op.tool,
        hook: "h:h",
        kind: "k",
        sealedPayload: new Uint8Array([7]),
        createdAt: NOW,
        attempts: 0,
      };
      expect(await store.recordSettledOperation({ operation: op, activity: event, extraActivity: [hookEvent], outbox: [staged] })).toEqual({
        status: "recorded",
      });
      expect(await store.getOperation(t, op.operationId)).toMatchObject({ state: "failed", errorCode: "PROVIDER_FAILED", settledAt: NOW + 5 });
      expect((await store.listActivity(t, { limit: 10 })).map((e) => e.id).sort()).toEqual([event.id, hookEvent.id].sort());
      expect(await store.claimOutbox(t, { limit: 10, now: NOW, claimUntil: NOW + 1 })).toHaveLength(1);
      // once only: the same operation again is refused, and nothing of it is written
      const again = activity(t, { operationId: op.operationId });
      await expect(store.recordSettledOperation({ operation: op, activity: again })).rejects.toBeTruthy();
      expect(await store.listActivity(t, { limit: 10 })).toHaveLength(2);
    });

    it("writes nothing when the tenant's config changed since the call was decided", async () => {
      const { store } = await open();
      const t = tenant();
      await store.installPlugin(t, "com.example.notes", NOW);
      const op = settled(t);
      const result = await store.recordSettledOperation({ operation: op, tenantConfigVersion: 0, activity: activity(t, { operationId: op.operationId }) });
      expect(result).toEqual({ status: "config-changed", version: 1 });
      expect(await store.getOperation(t, op.operationId)).toBeUndefined();
      expect(await store.listActivity(t, { limit: 10 })).toEqual([]);
      expect(await store.recordSettledOperation({ operation: op, tenantConfigVersion: 1, activity: activity(t, { operationId: op.operationId }) })).toEqual({
        status: "recorded",
      });
    });

    it("answers each of many records sent at once for itself: recorded, or refused under a stale config", async () => {
      const { store } = await open();
      const t = tenant();
      await store.installPlugin(t, "com.example.notes", NOW);
      const ops = Array.from({ length: 40 }, () => settled(t));
      const results = await Promise.all(
        ops.map((op, i) =>
          store.recordSettledOperation({ operation: op, tenantConfigVersion: i % 4 === 0 ? 0 : 1, activity: activity(t, { operationId: op.operationId }) }),
        ),
      );
      for (const [i, result] of results.entries()) expect(result).toEqual(i % 4 === 0 ? { status: "config-changed", version: 1 } : { status: "recorded" });
      for (const [i, op] of ops.entries()) {
        expect((await store.getOperation(t, op.operationId))?.state).toBe(i % 4 === 0 ? undefined : "succeeded");
      }
      expect(await store.listActivity(t, { limit: 100 })).toHaveLength(30);
      // one bad write among them fails alone
      const bad = [settled(t), settled(t, { state: "running" }), settled(t)];
      const answers = await Promise.allSettled(
        bad.map((op) => store.recordSettledOperation({ operation: op, activity: activity(t, { operationId: op.operationId }) })),
      );
      expect(answers.map((answer) => answer.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    });

    it("keeps every field of operations and events recorded together, and of the extra events and outbox rows", async () => {
      const { store } = await open();
      const t = tenant();
      const ops = Array.from({ length: 3 }, (_, i) =>
        settled(t, {
          callerPluginId: `com.example.caller-${i}`,
          actorUserId: `user-${i}`,
          state: i === 1 ? "failed" : "succeeded",
          ...(i === 1 ? { errorCode: "PROVIDER_FAILED" } : {}),
          createdAt: NOW + i,
          settledAt: NOW + 10 + i,
          leaseOwner: `instance-${i}`,
          leaseEpoch: i + 1,
          leaseExpiresAt: NOW + 20 + i,
        }),
      );
      const events = ops.map((op, i) =>
        activity(t, {
          operationId: op.operationId,
          version: i + 2,
          ...(i === 1 ? { errorCode: "PROVIDER_FAILED", errorClass: "TypeError" } : {}),
          confirmationId: randomUUID(),
          targetId: `record-${i}`,
          durationMs: 1.25 + i,
          correlationId: `corr-${i}`,
          ...(i === 2 ? { seam: "h:h" } : {}),
          via: i === 0 ? "mcp" : "http",
          authenticatedBy: "plugin-key",
          confirmation: "token",
          confirmedBy: "user-0",
          manifestVersion: `1.${i}.0`,
          schemaHash: `hash-${i}`,
          policyDecision: "allow",
          idempotencyKeyHash: `key-${i}`,
          grantId: randomUUID(),
        }),
      );
      const withExtras = settled(t);
      const extraEvent = activity(t, { operationId: withExtras.operationId, kind: "hook", outcome: "failed", seam: "h:x", durationMs: 0.5, version: 7 });
      const staged: OutboxRecord = {
        tenantId: t,
        id: uuidv7(NOW),
        operationId: withExtras.operationId,
        tool: withExtras.tool,
        hook: "h:x",
        kind: "k",
        sealedPayload: new Uint8Array([1, 2, 250]),
        createdAt: NOW + 3,
        attempts: 0,
      };
      const mainEvent = activity(t, { operationId: withExtras.operationId });
      const results = await Promise.all([
        ...ops.map((op, i) => store.recordSettledOperation({ operation: op, tenantConfigVersion: 0, activity: events[i]! })),
        store.recordSettledOperation({ operation: withExtras, activity: mainEvent, extraActivity: [extraEvent], outbox: [staged] }),
      ]);
      expect(results).toEqual(Array.from({ length: 4 }, () => ({ status: "recorded" })));
      for (const op of ops) {
        const { sealedInput: _sealedInput, ...written } = op;
        expect(await store.getOperation(t, op.operationId)).toMatchObject(written);
      }
      const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
      expect([...(await store.listActivity(t, { limit: 10 }))].sort(byId)).toEqual([...events, mainEvent, extraEvent].sort(byId));
      const [claimed] = await store.claimOutbox(t, { limit: 10, now: NOW, claimUntil: NOW + 1 });
      expect(claimed).toMatchObject({ id: staged.id, operationId: withExtras.operationId, hook: "h:x", kind: "k", createdAt: NOW + 3 });
      expect([...(claimed?.sealedPayload ?? [])]).toEqual([1, 2, 250]);
    });

    it("refuses an operation written running or without its settle time", async () => {
      const { store } = await open();
      const t = tenant();
      await expect(store.recordSettledOperation({ operation: settled(t, { state: "running" }), activity: activity(t) })).rejects.toMatchObject({
        code: "OUTCOME_UNKNOWN",
      });
      const { settledAt: _settledAt, ...unsettled } = settled(t);
      await expect(store.recordSettledOperation({ operation: unsettled, activity: activity(t) })).rejects.toBeInstanceOf(TypeError);
    });
  });

  it("prunes settled operations begun before the cut-off, never a running one", async () => {
    const { store } = await open();
    const t = tenant();
    const old = NOW - 100_000;
    const oldSettled = settled(t, { operationId: uuidv7(old), createdAt: old, settledAt: old + 5 });
    await store.recordSettledOperation({ operation: oldSettled, activity: activity(t) });
    const oldRunning = sampleOperation(t, { operationId: uuidv7(old), createdAt: old });
    await store.beginOperation({ operation: oldRunning });
    const oldSettledLater = sampleOperation(t, { operationId: uuidv7(old), createdAt: old });
    await store.beginOperation({ operation: oldSettledLater });
    await store.settleOperation(settleOf(oldSettledLater));
    const recent = settled(t);
    await store.recordSettledOperation({ operation: recent, activity: activity(t) });

    expect((await store.prune({ now: NOW, activityBefore: 0 })).operations).toBe(0);
    const result = await store.prune({ now: NOW, activityBefore: 0, operationsBefore: NOW - 50_000 });
    expect(result.operations).toBe(2);
    expect(await store.getOperation(t, oldSettled.operationId)).toBeUndefined();
    expect(await store.getOperation(t, oldSettledLater.operationId)).toBeUndefined();
    expect(await store.getOperation(t, oldRunning.operationId)).toMatchObject({ state: "running" });
    expect(await store.getOperation(t, recent.operationId)).toMatchObject({ state: "succeeded" });
  });
}
