/** Operations: begin, settle (with hooks' output), consumed token ids and lease takeover: part of the store contract suite. */
import { describe, expect, it } from "vitest";
import type { OperationRecord, OutboxRecord } from "../../store/store.js";
import { uuidv7 } from "../../ids.js";
import { NOW, sampleOperation as operation } from "../sample-records.js";
import type { StoreContractKit } from "./kit.js";

/** Registers the operations tests of the store contract. */
export function describeOperations(kit: StoreContractKit): void {
  const { open, openPeer, scope, activity, settleOf, tenant } = kit;
  describe("operations", () => {
    it("creates a running operation with its lease, visible only in its tenant", async () => {
      const { store } = await open();
      const t = tenant();
      const op = operation(t, { sealedInput: new Uint8Array([1, 2, 3]) });
      expect(await store.beginOperation({ operation: op })).toEqual({ status: "started" });
      const read = await store.getOperation(t, op.operationId);
      expect(read).toMatchObject({
        operationId: op.operationId,
        state: "running",
        leaseOwner: "instance-a",
        leaseEpoch: 1,
        leaseExpiresAt: NOW + 30_000,
        callerPluginId: "com.example.caller",
        actorUserId: "user-1",
      });
      expect([...(read?.sealedInput ?? [])]).toEqual([1, 2, 3]);
      expect(await store.getOperation(tenant(), op.operationId)).toBeUndefined();
    });

    it("starts nothing when the tenant config changed since authorization", async () => {
      const { store } = await open();
      const t = tenant();
      expect(await store.beginOperation({ operation: operation(t), tenantConfigVersion: 0 })).toEqual({ status: "started" });
      await store.installPlugin(t, "com.example.notes", NOW);
      const stale = operation(t);
      const result = await store.beginOperation({
        operation: stale,
        tenantConfigVersion: 0,
        consumeToken: { tokenId: "jti-stale", consumedAt: NOW, expiresAt: NOW + 1000 },
        idempotency: { scope: scope(t, "stale"), inputDigest: "d", expiresAt: NOW + 1000 },
      });
      expect(result).toEqual({ status: "config-changed", version: 1 });
      expect(await store.getOperation(t, stale.operationId)).toBeUndefined();
      expect(await store.findConsumedToken(t, "jti-stale")).toBeUndefined();
      expect(await store.findIdempotency(scope(t, "stale"), NOW)).toBeUndefined();
      expect(await store.beginOperation({ operation: operation(t), tenantConfigVersion: 1 })).toEqual({ status: "started" });
    });

    it("settles only under its lease owner and epoch, with its activity event, once", async () => {
      const { store } = await open();
      const t = tenant();
      const op = operation(t, { sealedInput: new Uint8Array([9]) });
      await store.beginOperation({ operation: op });

      expect(await store.settleOperation(settleOf(op, { leaseOwner: "instance-b" }))).toBe("lease-lost");
      expect(await store.settleOperation(settleOf(op, { leaseEpoch: 2 }))).toBe("lease-lost");
      expect(await store.listActivity(t, { limit: 10 })).toEqual([]);
      expect((await store.getOperation(t, op.operationId))?.state).toBe("running");

      const settle = settleOf(op, { state: "failed", errorCode: "PROVIDER_FAILED" });
      expect(await store.settleOperation(settle)).toBe("settled");
      const read = await store.getOperation(t, op.operationId);
      expect(read).toMatchObject({ state: "failed", errorCode: "PROVIDER_FAILED", settledAt: NOW + 10 });
      expect(read?.sealedInput).toBeUndefined();
      expect((await store.listActivity(t, { limit: 10 })).map((e) => e.id)).toEqual([settle.activity.id]);

      await expect(store.settleOperation(settleOf(op, { state: "succeeded" }))).rejects.toBeTruthy();
      expect((await store.getOperation(t, op.operationId))?.state).toBe("failed");
    });

    it("refuses to settle an operation that does not exist or another tenant's", async () => {
      const { store } = await open();
      const t = tenant();
      const op = operation(t);
      await expect(store.settleOperation(settleOf(op))).rejects.toBeTruthy();
      await store.beginOperation({ operation: op });
      await expect(store.settleOperation(settleOf({ ...op, tenantId: tenant() }))).rejects.toBeTruthy();
      expect((await store.getOperation(t, op.operationId))?.state).toBe("running");
    });

    it("refuses an operation created in any state but running, and settling back to running", async () => {
      const { store } = await open();
      const t = tenant();
      await expect(store.beginOperation({ operation: operation(t, { state: "succeeded" }) })).rejects.toBeTruthy();
      const op = operation(t);
      await store.beginOperation({ operation: op });
      await expect(store.settleOperation({ ...settleOf(op), state: "running" as unknown as "succeeded" })).rejects.toBeTruthy();
      expect((await store.getOperation(t, op.operationId))?.state).toBe("running");
    });

    it("renews only leases the owner still holds", async () => {
      const { store } = await open();
      const t = tenant();
      const mine = operation(t);
      const other = operation(t, { leaseOwner: "instance-b" });
      const settled = operation(t);
      for (const op of [mine, other, settled]) await store.beginOperation({ operation: op });
      await store.settleOperation(settleOf(settled));
      const renewed = await store.renewLeases(
        "instance-a",
        [mine, other, settled].map((op) => ({ tenantId: t, operationId: op.operationId, leaseEpoch: 1 })),
        NOW + 90_000,
      );
      expect(renewed).toBe(1);
      expect((await store.getOperation(t, mine.operationId))?.leaseExpiresAt).toBe(NOW + 90_000);
      expect((await store.getOperation(t, other.operationId))?.leaseExpiresAt).toBe(NOW + 30_000);
    });
  });

  describe("confirmation token ids", () => {
    const consume = (tokenId: string) => ({ tokenId, consumedAt: NOW, expiresAt: NOW + 300_000 });

    it("consumes a token id once; the second use names the first operation and creates nothing", async () => {
      const { store } = await open();
      const t = tenant();
      const first = operation(t);
      const second = operation(t);
      expect(await store.beginOperation({ operation: first, consumeToken: consume("jti-1") })).toEqual({ status: "started" });
      const again = await store.beginOperation({
        operation: second,
        consumeToken: consume("jti-1"),
        idempotency: { scope: scope(t, "fresh"), inputDigest: "d", expiresAt: NOW + 1000 },
      });
      expect(again).toMatchObject({
        status: "token-used",
        consumed: { tokenId: "jti-1", operationId: first.operationId, callerPluginId: "com.example.caller", actorUserId: "user-1" },
      });
      expect(await store.getOperation(t, second.operationId)).toBeUndefined();
      expect(await store.findIdempotency(scope(t, "fresh"), NOW)).toBeUndefined();
      expect(await store.findConsumedToken(t, "jti-1")).toMatchObject({ operationId: first.operationId });
      expect(await store.findConsumedToken(tenant(), "jti-1")).toBeUndefined();
    });

    it("lets exactly one of many concurrent begins consume a token id", async () => {
      const { store } = await open();
      const t = tenant();
      const results = await Promise.all(Array.from({ length: 25 }, () => store.beginOperation({ operation: operation(t), consumeToken: consume("jti-race") })));
      expect(results.filter((r) => r.status === "started")).toHaveLength(1);
      expect(results.filter((r) => r.status === "token-used")).toHaveLength(24);
    });

    it("holds single use across two connections to the same database", async () => {
      const fixture = await open();
      const peer = await openPeer(fixture);
      if (peer === undefined) return;
      const t = tenant();
      const first = operation(t);
      await fixture.store.beginOperation({ operation: first, consumeToken: consume("jti-peer") });
      const second = await peer.beginOperation({ operation: operation(t), consumeToken: consume("jti-peer") });
      expect(second).toMatchObject({ status: "token-used", consumed: { operationId: first.operationId } });
    });
  });

  describe("settlement with hooks' output", () => {
    function outboxRow(op: OperationRecord, kind: string, overrides: Partial<OutboxRecord> = {}): OutboxRecord {
      return {
        tenantId: op.tenantId,
        id: uuidv7(NOW),
        operationId: op.operationId,
        tool: op.tool,
        hook: "com.example.hooks:notify",
        kind,
        sealedPayload: new Uint8Array([7, 7, 7]),
        createdAt: NOW,
        attempts: 0,
        ...overrides,
      };
    }

    it("commits extra activity and outbox rows with the operation, and nothing when the lease is lost", async () => {
      const { store } = await open();
      const t = tenant();
      const op = operation(t);
      await store.beginOperation({ operation: op });
      const lostEvent = activity(t, { kind: "hook", outcome: "failed", seam: "com.example.hooks:notify" });
      const lost = await store.settleOperation(settleOf(op, { leaseEpoch: 9, extraActivity: [lostEvent], outbox: [outboxRow(op, "lost")] }));
      expect(lost).toBe("lease-lost");
      expect(await store.claimOutbox(t, { limit: 10, now: NOW, claimUntil: NOW + 1000 })).toEqual([]);
      expect(await store.listActivity(t, { limit: 10 })).toEqual([]);

      const hookEvent = activity(t, { kind: "hook", outcome: "failed", errorClass: "TimeoutError", seam: "com.example.hooks:notify" });
      const rows = [outboxRow(op, "first"), outboxRow(op, "second")];
      const settle = settleOf(op, { extraActivity: [hookEvent], outbox: rows });
      expect(await store.settleOperation(settle)).toBe("settled");
      const events = await store.listActivity(t, { limit: 10 });
      expect(events.map((e) => e.id).sort()).toEqual([settle.activity.id, hookEvent.id].sort());
      expect(events.find((e) => e.id === hookEvent.id)).toEqual(hookEvent);
      const claimed = await store.claimOutbox(t, { limit: 10, now: NOW + 1, claimUntil: NOW + 1000 });
      expect(claimed.map((row) => row.kind)).toEqual(["first", "second"]);
      expect(claimed[0]).toMatchObject({ operationId: op.operationId, hook: "com.example.hooks:notify", attempts: 1, claimedUntil: NOW + 1000 });
      expect([...claimed[0]!.sealedPayload]).toEqual([7, 7, 7]);
    });

    it("claims outbox rows once per lease, per tenant, and deletes acknowledged ones", async () => {
      const { store } = await open();
      const t = tenant();
      const op = operation(t);
      await store.beginOperation({ operation: op });
      const rows = Array.from({ length: 3 }, (_, i) => outboxRow(op, `r${i}`));
      await store.settleOperation(settleOf(op, { outbox: rows }));
      expect(await store.claimOutbox(tenant(), { limit: 10, now: NOW, claimUntil: NOW + 1000 })).toEqual([]);
      const first = await store.claimOutbox(t, { limit: 2, now: NOW, claimUntil: NOW + 1000 });
      expect(first.map((row) => row.kind)).toEqual(["r0", "r1"]);
      const second = await store.claimOutbox(t, { limit: 10, now: NOW + 500, claimUntil: NOW + 1500 });
      expect(second.map((row) => row.kind)).toEqual(["r2"]);
      expect(await store.ackOutbox(tenant(), [first[0]!.id])).toBe(0);
      expect(await store.ackOutbox(t, [first[0]!.id])).toBe(1);
      // r1's claim lapsed: it comes back, counting the attempt
      const again = await store.claimOutbox(t, { limit: 10, now: NOW + 1000, claimUntil: NOW + 2000 });
      expect(again.map((row) => [row.kind, row.attempts])).toEqual([["r1", 2]]);
      expect(await store.ackOutbox(t, [again[0]!.id, second[0]!.id])).toBe(2);
      expect(await store.claimOutbox(t, { limit: 10, now: NOW + 10_000, claimUntil: NOW + 11_000 })).toEqual([]);
    });

    it("gives each outbox row to one of several racing claimers", async () => {
      const fixture = await open();
      const { store } = fixture;
      const peer = (await openPeer(fixture)) ?? store;
      const t = tenant();
      const op = operation(t);
      await store.beginOperation({ operation: op });
      await store.settleOperation(settleOf(op, { outbox: Array.from({ length: 20 }, (_, i) => outboxRow(op, `r${i}`)) }));
      const claims = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? store : peer).claimOutbox(t, { limit: 5, now: NOW, claimUntil: NOW + 1000 })),
      );
      const ids = claims.flat().map((row) => row.id);
      expect(ids).toHaveLength(20);
      expect(new Set(ids).size).toBe(20);
    });

    it("settles the idempotency record by operation id when the key is not known (recovery)", async () => {
      const { store } = await open();
      const t = tenant();
      const op = operation(t);
      await store.beginOperation({
        operation: op,
        idempotency: { scope: scope(t, "rec"), inputDigest: "d", expiresAt: NOW + 100_000 },
      });
      await store.settleOperation(settleOf(op, { state: "unknown", errorCode: "OUTCOME_UNKNOWN", idempotency: {} }));
      expect(await store.findIdempotency(scope(t, "rec"), NOW)).toMatchObject({ state: "unknown", errorCode: "OUTCOME_UNKNOWN" });
    });
  });

  describe("lease takeover", () => {
    it("lists running operations whose lease expired, and lets exactly one taker move each to a new epoch", async () => {
      const fixture = await open();
      const { store } = fixture;
      const peer = (await openPeer(fixture)) ?? store;
      const t = tenant();
      // a lease time no other test uses, far in the past
      const expiredAt = 1_000 + Math.floor(Math.random() * 1_000_000);
      const stale = operation(t, { leaseExpiresAt: expiredAt, sealedInput: new Uint8Array([1]) });
      const live = operation(t, { leaseExpiresAt: NOW + 30_000 });
      const done = operation(t, { leaseExpiresAt: expiredAt });
      for (const op of [stale, live, done]) await store.beginOperation({ operation: op });
      await store.settleOperation(settleOf(done));
      const listed = (await store.listExpiredLeases(expiredAt, 1000)).filter((op) => op.tenantId === t);
      expect(listed.map((op) => op.operationId)).toEqual([stale.operationId]);
      expect(listed[0]).toMatchObject({ leaseEpoch: 1, recoveryAttempts: 0 });

      const takeover = { tenantId: t, operationId: stale.operationId, leaseEpoch: 1, now: expiredAt, expiresAt: NOW + 60_000 };
      const [a, b] = await Promise.all([store.takeLease({ ...takeover, owner: "instance-b" }), peer.takeLease({ ...takeover, owner: "instance-c" })]);
      const winners = [a, b].filter((taken) => taken !== undefined);
      expect(winners).toHaveLength(1);
      expect(winners[0]).toMatchObject({ leaseEpoch: 2, recoveryAttempts: 1, leaseExpiresAt: NOW + 60_000, state: "running" });
      expect([...(winners[0]!.sealedInput ?? [])]).toEqual([1]);
      // the old owner can no longer renew or settle; the new one can
      expect(await store.renewLeases("instance-a", [{ tenantId: t, operationId: stale.operationId, leaseEpoch: 1 }], NOW + 90_000)).toBe(0);
      expect(await store.settleOperation(settleOf(stale))).toBe("lease-lost");
      expect(await store.settleOperation(settleOf(stale, { leaseOwner: winners[0]!.leaseOwner, leaseEpoch: 2, state: "unknown" }))).toBe("settled");
      // a lease that has not expired is not taken
      expect(await store.takeLease({ ...takeover, operationId: live.operationId, owner: "instance-b" })).toBeUndefined();
      expect((await store.getOperation(t, live.operationId))?.leaseEpoch).toBe(1);
    });
  });
}
