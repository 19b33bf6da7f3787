/** Idempotency records, activity, and pruning what retention allows: part of the store contract suite. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ActivityRecord, IdempotencyScope, OperationBegin } from "../../store/store.js";
import { NOW, sampleOperation as operation } from "../sample-records.js";
import type { StoreContractKit } from "./kit.js";

/** Registers the records tests of the store contract. */
export function describeRecords(kit: StoreContractKit): void {
  const { open, scope, activity, settleOf, tenant } = kit;
  describe("idempotency records", () => {
    const withKey = (t: string, key: string, digest = "digest-1"): Pick<OperationBegin, "idempotency"> => ({
      idempotency: { scope: scope(t, key), inputDigest: digest, expiresAt: NOW + 24 * 3600_000 },
    });

    it("takes a key once per scope and keeps the settled outcome with its sealed result", async () => {
      const { store } = await open();
      const t = tenant();
      const op = operation(t);
      expect(await store.beginOperation({ operation: op, ...withKey(t, "k") })).toEqual({ status: "started" });
      const again = await store.beginOperation({ operation: operation(t), ...withKey(t, "k", "digest-2") });
      expect(again).toMatchObject({
        status: "idempotency-exists",
        record: { operationId: op.operationId, inputDigest: "digest-1", state: "running" },
      });
      const sealed = new Uint8Array([4, 5, 6]);
      await store.settleOperation(settleOf(op, { idempotency: { scope: scope(t, "k"), sealedResult: sealed } }));
      const record = await store.findIdempotency(scope(t, "k"), NOW + 1);
      expect(record).toMatchObject({ state: "succeeded", operationId: op.operationId, inputDigest: "digest-1" });
      expect([...(record?.sealedResult ?? [])]).toEqual([4, 5, 6]);
      // no guard set given: not known, so a replay runs whatever guards act then
      expect(record?.guardSet).toBeUndefined();
    });

    it("keeps the guards that passed the result with it, the empty set too, by key and by operation id", async () => {
      const { store } = await open();
      const t = tenant();
      const [byKey, none, byOperation] = [operation(t), operation(t), operation(t)];
      await store.beginOperation({ operation: byKey, ...withKey(t, "g1") });
      await store.beginOperation({ operation: none, ...withKey(t, "g2") });
      await store.beginOperation({ operation: byOperation, ...withKey(t, "g3") });
      const guardSet = "com.example.dlp:redact\ncom.example.dlp:withhold-pii";
      await store.settleOperation(settleOf(byKey, { idempotency: { scope: scope(t, "g1"), sealedResult: new Uint8Array([1]), guardSet } }));
      await store.settleOperation(settleOf(none, { idempotency: { scope: scope(t, "g2"), sealedResult: new Uint8Array([2]), guardSet: "" } }));
      await store.settleOperation(settleOf(byOperation, { idempotency: { sealedResult: new Uint8Array([3]), guardSet: "a:b" } }));
      expect(await store.findIdempotency(scope(t, "g1"), NOW)).toMatchObject({ state: "succeeded", guardSet });
      expect(await store.findIdempotency(scope(t, "g2"), NOW)).toMatchObject({ state: "succeeded", guardSet: "" });
      expect(await store.findIdempotency(scope(t, "g3"), NOW)).toMatchObject({ state: "succeeded", guardSet: "a:b" });
      // an expired key taken again starts without the old guard set
      await store.beginOperation({
        operation: operation(t, { createdAt: NOW + 48 * 3600_000 }),
        idempotency: { scope: scope(t, "g1"), inputDigest: "digest-1", expiresAt: NOW + 72 * 3600_000 },
      });
      const retaken = await store.findIdempotency(scope(t, "g1"), NOW + 48 * 3600_000);
      expect(retaken).toMatchObject({ state: "running" });
      expect(retaken?.guardSet).toBeUndefined();
    });

    it("scopes keys by tenant, caller, actor and tool", async () => {
      const { store } = await open();
      const t = tenant();
      await store.beginOperation({ operation: operation(t), ...withKey(t, "k") });
      const variants: IdempotencyScope[] = [
        scope(tenant(), "k"),
        scope(t, "k", { callerPluginId: "com.example.other" }),
        scope(t, "k", { actorUserId: "user-2" }),
        scope(t, "k", { tool: "com.example.notes:create-record@2" }),
      ];
      for (const variant of variants) {
        const op = operation(variant.tenantId);
        const result = await store.beginOperation({
          operation: op,
          idempotency: { scope: variant, inputDigest: "x", expiresAt: NOW + 1000 },
        });
        expect(result).toEqual({ status: "started" });
      }
    });

    it("lets exactly one of many concurrent begins take a key", async () => {
      const { store } = await open();
      const t = tenant();
      const results = await Promise.all(Array.from({ length: 25 }, () => store.beginOperation({ operation: operation(t), ...withKey(t, "race") })));
      expect(results.filter((r) => r.status === "started")).toHaveLength(1);
      expect(results.filter((r) => r.status === "idempotency-exists")).toHaveLength(24);
    });

    it("forgets a key once it expires", async () => {
      const { store } = await open();
      const t = tenant();
      const first = operation(t);
      await store.beginOperation({
        operation: first,
        idempotency: { scope: scope(t, "old"), inputDigest: "d", expiresAt: NOW + 1000 },
      });
      expect(await store.findIdempotency(scope(t, "old"), NOW + 999)).toBeDefined();
      expect(await store.findIdempotency(scope(t, "old"), NOW + 1000)).toBeUndefined();
      const later = operation(t, { createdAt: NOW + 2000 });
      const result = await store.beginOperation({
        operation: later,
        idempotency: { scope: scope(t, "old"), inputDigest: "d2", expiresAt: NOW + 5000 },
      });
      expect(result).toEqual({ status: "started" });
      expect((await store.findIdempotency(scope(t, "old"), NOW + 2001))?.operationId).toBe(later.operationId);
    });
  });

  describe("activity", () => {
    it("pages a tenant's events newest first, and one caller's events for one actor alone", async () => {
      const { store } = await open();
      const t = tenant();
      const events: ActivityRecord[] = [];
      for (let i = 0; i < 7; i++) {
        const event = activity(t, {
          at: NOW + i,
          actorUserId: i % 2 === 0 ? "alice" : "bob",
          callerPluginId: i % 3 === 0 ? "com.example.other" : "com.example.caller",
        });
        events.push(event);
        await store.appendActivity(event);
      }
      await store.appendActivity(activity(tenant(), { actorUserId: "alice" }));
      const newestFirst = [...events].reverse().map((e) => e.id);
      const page1 = await store.listActivity(t, { limit: 3 });
      expect(page1.map((e) => e.id)).toEqual(newestFirst.slice(0, 3));
      const page2 = await store.listActivity(t, { limit: 3, beforeId: page1[2]!.id });
      expect(page2.map((e) => e.id)).toEqual(newestFirst.slice(3, 6));
      const alice = await store.listActivity(t, { limit: 10, caller: { actorUserId: "alice", callerPluginId: "com.example.caller" } });
      const mine = events.filter((e) => e.actorUserId === "alice" && e.callerPluginId === "com.example.caller").reverse();
      expect(alice.map((e) => e.id)).toEqual(mine.map((e) => e.id));
      expect(mine.length).toBeGreaterThan(0);
      const before = await store.listActivity(t, { limit: 10, beforeId: mine[0]!.id, caller: { actorUserId: "alice", callerPluginId: "com.example.caller" } });
      expect(before.map((e) => e.id)).toEqual(mine.slice(1).map((e) => e.id));
      expect(page1[0]).toEqual(events[6]);
    });

    it("keeps every field of an event", async () => {
      const { store } = await open();
      const t = tenant();
      const event = activity(t, {
        errorCode: "PROVIDER_FAILED",
        errorClass: "TypeError",
        operationId: randomUUID(),
        confirmationId: randomUUID(),
        targetId: "record-9",
        durationMs: 1.25,
        correlationId: "corr-1",
        outcome: "failed",
        via: "mcp",
      });
      await store.appendActivity(event);
      expect(await store.listActivity(t, { limit: 1 })).toEqual([event]);
    });
  });

  it("keeps a consumed token id until its cut-off, even after the token expired", async () => {
    const { store } = await open();
    const t = tenant();
    await store.beginOperation({ operation: operation(t), consumeToken: { tokenId: "skew", consumedAt: NOW, expiresAt: NOW + 10 } });
    const early = await store.prune({ now: NOW + 5_000, consumedTokensExpiredBefore: NOW, activityBefore: 0 });
    expect(early.consumedTokens).toBe(0);
    expect(await store.findConsumedToken(t, "skew")).toBeDefined();
    const byDefault = await store.prune({ now: NOW + 60_000, activityBefore: 0 });
    expect(byDefault.consumedTokens).toBe(0);
    expect(await store.findConsumedToken(t, "skew")).toBeDefined();
    expect((await store.prune({ now: NOW + 11 * 60_000, activityBefore: 0 })).consumedTokens).toBe(1);
  });

  it("prunes expired token ids and idempotency records, and activity past retention", async () => {
    const { store } = await open();
    const t = tenant();
    await store.beginOperation({ operation: operation(t), consumeToken: { tokenId: "old", consumedAt: NOW, expiresAt: NOW + 10 } });
    await store.beginOperation({ operation: operation(t), consumeToken: { tokenId: "live", consumedAt: NOW, expiresAt: NOW + 10_000 } });
    await store.beginOperation({
      operation: operation(t),
      idempotency: { scope: scope(t, "old"), inputDigest: "d", expiresAt: NOW + 10 },
    });
    await store.beginOperation({
      operation: operation(t),
      idempotency: { scope: scope(t, "live"), inputDigest: "d", expiresAt: NOW + 10_000 },
    });
    const oldEvent = activity(t, { at: NOW - 100_000 });
    const newEvent = activity(t, { at: NOW });
    await store.appendActivity(oldEvent);
    await store.appendActivity(newEvent);

    const result = await store.prune({ now: NOW + 100, consumedTokensExpiredBefore: NOW + 100, activityBefore: NOW - 50_000 });
    expect(result).toMatchObject({ consumedTokens: 1, idempotencyRecords: 1, activityEvents: 1 });
    expect(await store.findConsumedToken(t, "old")).toBeUndefined();
    expect(await store.findConsumedToken(t, "live")).toBeDefined();
    expect(await store.findIdempotency(scope(t, "live"), NOW + 100)).toBeDefined();
    expect((await store.listActivity(t, { limit: 10 })).map((e) => e.id)).toEqual([newEvent.id]);
  });
}
