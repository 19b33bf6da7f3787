/** Platform confirmation requests, and pruning them with runs and outbox rows: part of the store contract suite. */
import { describe, expect, it } from "vitest";
import type { OutboxRecord, Store } from "../../store/store.js";
import { uuidv7 } from "../../ids.js";
import { NOW, sampleConfirmation as request, sampleOperation as operation } from "../sample-records.js";
import type { StoreContractKit } from "./kit.js";

/** Registers the confirmations tests of the store contract. */
export function describeConfirmations(kit: StoreContractKit): void {
  const { open, openPeer, activity, settleOf, tenant } = kit;
  describe("confirmation requests", () => {
    it("keeps a pending request with its sealed preview, only in its tenant", async () => {
      const { store } = await open();
      const t = tenant();
      const made = request(t, { runId: "run-1" });
      expect(await store.createConfirmation(made, 5)).toEqual({ status: "created" });
      const read = await store.getConfirmation(t, made.requestId);
      const { sealedPreview, ...rest } = made;
      expect(read).toMatchObject(rest);
      expect(Object.keys(read!).sort()).toEqual(Object.keys(made).sort());
      expect([...(read?.sealedPreview ?? [])]).toEqual([...sealedPreview!]);
      expect(await store.getConfirmation(tenant(), made.requestId)).toBeUndefined();
    });

    it("refuses more than maxPending live pending requests per caller and actor", async () => {
      const { store } = await open();
      const t = tenant();
      expect(await store.createConfirmation(request(t, { expiresAt: NOW + 1000 }), 2)).toEqual({ status: "created" });
      expect(await store.createConfirmation(request(t, { expiresAt: NOW + 2000 }), 2)).toEqual({ status: "created" });
      expect(await store.createConfirmation(request(t), 2)).toEqual({ status: "rate-limited", retryAt: NOW + 1000 });
      // another actor, another caller, another tenant each have their own budget
      expect(await store.createConfirmation(request(t, { actorUserId: "user-2" }), 2)).toEqual({ status: "created" });
      expect(await store.createConfirmation(request(t, { callerPluginId: "com.example.other" }), 2)).toEqual({ status: "created" });
      expect(await store.createConfirmation(request(tenant()), 2)).toEqual({ status: "created" });
      // an expired pending request no longer counts
      expect(await store.createConfirmation(request(t, { createdAt: NOW + 1000 }), 2)).toEqual({ status: "created" });
    });

    it("holds the pending limit when many creates race, across connections", async () => {
      const fixture = await open();
      const { store } = fixture;
      const peer = (await openPeer(fixture)) ?? store;
      const t = tenant();
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? store : peer).createConfirmation(request(t), 3)));
      expect(results.filter((r) => r.status === "created")).toHaveLength(3);
      expect(results.filter((r) => r.status === "rate-limited")).toHaveLength(9);
    });

    it("moves a pending request once, only while live (decisions) or only once expired (expiry), with its event", async () => {
      const fixture = await open();
      const { store } = fixture;
      const peer = (await openPeer(fixture)) ?? store;
      const t = tenant();
      const made = request(t);
      await store.createConfirmation(made, 5);
      const approve = (s: Store, at: number) =>
        s.transitionConfirmation({
          tenantId: t,
          requestId: made.requestId,
          to: "approved",
          at,
          when: "live",
          tokenExpiresAt: at + 300_000,
          activity: activity(t, { kind: "confirmation", phase: "approve", outcome: "approved" }),
        });
      expect(await store.transitionConfirmation({ tenantId: t, requestId: made.requestId, to: "expired", at: NOW + 10, when: "expired" })).toBeUndefined();
      const results = await Promise.all([approve(store, NOW + 10), approve(peer, NOW + 11)]);
      const approved = results.filter((r) => r !== undefined);
      expect(approved).toHaveLength(1);
      expect(approved[0]).toMatchObject({ status: "approved", decidedAt: expect.any(Number), tokenExpiresAt: expect.any(Number) });
      expect(approved[0]?.sealedPreview).toBeUndefined();
      expect((await store.listActivity(t, { limit: 10 })).filter((e) => e.kind === "confirmation")).toHaveLength(1);
      expect(await store.transitionConfirmation({ tenantId: t, requestId: made.requestId, to: "denied", at: NOW + 12, when: "live" })).toBeUndefined();

      const late = request(t, { expiresAt: NOW + 100 });
      await store.createConfirmation(late, 5);
      expect(await store.transitionConfirmation({ tenantId: t, requestId: late.requestId, to: "approved", at: NOW + 100, when: "live" })).toBeUndefined();
      const expired = await store.transitionConfirmation({
        tenantId: t,
        requestId: late.requestId,
        to: "expired",
        at: NOW + 100,
        when: "expired",
        activity: activity(t, { kind: "confirmation", phase: "expire", outcome: "expired" }),
      });
      expect(expired).toMatchObject({ status: "expired", decidedAt: NOW + 100 });
      expect(await store.transitionConfirmation({ tenantId: tenant(), requestId: made.requestId, to: "denied", at: NOW, when: "live" })).toBeUndefined();
    });

    it("finds the open request bound to exactly one call: approved before pending, never decided otherwise or expired", async () => {
      const { store } = await open();
      const t = tenant();
      const query = {
        tenantId: t,
        callerPluginId: "com.example.caller",
        actorUserId: "user-1",
        tool: "com.example.notes:create-record@1",
        schemaHash: "sch",
        digest: "dig",
        digestKid: "k1",
        runId: undefined,
        now: NOW + 1,
      };
      expect(await store.findOpenConfirmation(query)).toBeUndefined();
      const pending = request(t);
      await store.createConfirmation(pending, 10);
      expect((await store.findOpenConfirmation(query))?.requestId).toBe(pending.requestId);
      // anything else bound differently is not it
      for (const other of [
        { tenantId: tenant() },
        { callerPluginId: "com.example.other" },
        { actorUserId: "user-2" },
        { tool: "com.example.notes:create-record@2" },
        { schemaHash: "other" },
        { digest: "other" },
        { digestKid: "k2" },
        { runId: "run-1" },
        { now: pending.expiresAt },
      ]) {
        expect(await store.findOpenConfirmation({ ...query, ...other })).toBeUndefined();
      }
      const inRun = request(t, { runId: "run-1" });
      await store.createConfirmation(inRun, 10);
      expect((await store.findOpenConfirmation({ ...query, runId: "run-1" }))?.requestId).toBe(inRun.requestId);
      expect((await store.findOpenConfirmation(query))?.requestId).toBe(pending.requestId);

      const approved = request(t, { createdAt: NOW - 10 });
      await store.createConfirmation(approved, 10);
      await store.transitionConfirmation({ tenantId: t, requestId: approved.requestId, to: "approved", at: NOW, when: "live", tokenExpiresAt: NOW + 300_000 });
      expect((await store.findOpenConfirmation(query))?.requestId).toBe(approved.requestId);
      // an approval whose token expired is not open; the pending one is found again
      expect((await store.findOpenConfirmation({ ...query, now: NOW + 300_000 }))?.requestId).toBeUndefined();
      expect((await store.findOpenConfirmation({ ...query, now: NOW + 299_999 }))?.requestId).toBe(approved.requestId);
      for (const to of ["denied", "cancelled"] as const) {
        const decided = request(t, { createdAt: NOW + 5 });
        await store.createConfirmation(decided, 10);
        await store.transitionConfirmation({ tenantId: t, requestId: decided.requestId, to, at: NOW, when: "live" });
      }
      const expired = request(t, { createdAt: NOW + 6, expiresAt: NOW + 7 });
      await store.createConfirmation(expired, 10);
      await store.transitionConfirmation({ tenantId: t, requestId: expired.requestId, to: "expired", at: NOW + 8, when: "expired" });
      expect((await store.findOpenConfirmation({ ...query, now: NOW + 9 }))?.requestId).toBe(approved.requestId);
    });

    it("lists pending requests that expired, in any tenant", async () => {
      const { store } = await open();
      const t = tenant();
      const at = 5_000 + Math.floor(Math.random() * 1_000_000);
      const due = request(t, { createdAt: at - 10, expiresAt: at });
      const notYet = request(t, { createdAt: at - 10, expiresAt: at + 1 });
      const decided = request(t, { createdAt: at - 10, expiresAt: at });
      for (const made of [due, notYet, decided]) await store.createConfirmation(made, 10);
      await store.transitionConfirmation({ tenantId: t, requestId: decided.requestId, to: "denied", at: at - 5, when: "live" });
      const listed = (await store.listExpiredConfirmations(at, 1000)).filter((r) => r.tenantId === t);
      expect(listed.map((r) => r.requestId)).toEqual([due.requestId]);
    });
  });

  it("prunes confirmation requests, runs and outbox rows past their retention", async () => {
    const { store } = await open();
    const t = tenant();
    const old = { tenantId: t, callerPluginId: "c", actorUserId: "u", allow: ["*"], createdAt: NOW - 10_000 };
    await store.insertRun({ ...old, runId: "old", expiresAt: NOW - 5_000 });
    await store.insertRun({ ...old, runId: "live", expiresAt: NOW + 5_000 });
    const base = {
      tenantId: t,
      tool: "p:t@1",
      providerPluginId: "p",
      callerPluginId: "c",
      actorUserId: "u",
      digest: "d",
      digestKid: "k",
      schemaHash: "s",
      effect: "write" as const,
      mode: "platform" as const,
      status: "pending" as const,
      createdAt: NOW - 10_000,
    };
    await store.createConfirmation({ ...base, requestId: "old", expiresAt: NOW - 5_000 }, 10);
    await store.createConfirmation({ ...base, requestId: "live", expiresAt: NOW + 5_000 }, 10);
    const op = operation(t);
    await store.beginOperation({ operation: op });
    const row = (id: string, createdAt: number): OutboxRecord => ({
      tenantId: t,
      id,
      operationId: op.operationId,
      tool: op.tool,
      hook: "h:h",
      kind: "k",
      sealedPayload: new Uint8Array([1]),
      createdAt,
      attempts: 0,
    });
    await store.settleOperation(settleOf(op, { outbox: [row(uuidv7(NOW - 10_000), NOW - 10_000), row(uuidv7(NOW), NOW)] }));
    const result = await store.prune({
      now: NOW,
      activityBefore: 0,
      confirmationsExpiredBefore: NOW - 1_000,
      outboxBefore: NOW - 1_000,
    });
    expect(result).toMatchObject({ confirmations: 1, runs: 1, outboxItems: 1 });
    expect(await store.getRun(t, "old")).toBeUndefined();
    expect(await store.getRun(t, "live")).toBeDefined();
    expect(await store.getConfirmation(t, "old")).toBeUndefined();
    expect(await store.getConfirmation(t, "live")).toBeDefined();
    expect(await store.claimOutbox(t, { limit: 10, now: NOW, claimUntil: NOW + 1 })).toHaveLength(1);
  });
}
