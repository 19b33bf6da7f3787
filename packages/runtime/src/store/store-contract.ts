/**
 * The shared contract suite every `Store` passes (SQLite here, PostgreSQL later). Import it from
 * `@toolpact/runtime/testing` and call it from a vitest file with a factory of fresh stores.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type {
  ActivityRecord,
  IdempotencyScope,
  OperationBegin,
  OperationRecord,
  OperationSettle,
  OutboxRecord,
  Store,
} from "./store.js";
import { uuidv7 } from "../ids.js";
import {
  NOW,
  sampleActivity,
  sampleConfirmation as request,
  sampleOperation as operation,
  sampleSettle,
} from "./sample-records.js";

/** A store under test, with an optional second connection to the same database (another instance). */
export interface StoreContractFixture {
  readonly store: Store;
  /** Opens another store on the same database: single-use and idempotency must hold across both. */
  openPeer?(): Promise<Store>;
  /** Releases whatever the factory made (files, schemas). */
  dispose?(): Promise<void>;
}

/**
 * Registers the contract tests for one store implementation.
 * @example describeStoreContract("sqlite", async () => ({ store: await createSqliteStore({ path }), dispose }))
 */
export function describeStoreContract(name: string, makeStore: () => Promise<Store | StoreContractFixture>): void {
  describe(`Store contract: ${name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      while (cleanups.length > 0) await cleanups.pop()!().catch(() => undefined);
    });

    async function open(): Promise<StoreContractFixture> {
      const made = await makeStore();
      const fixture: StoreContractFixture = "store" in made && typeof (made as StoreContractFixture).store === "object"
        ? (made as StoreContractFixture)
        : { store: made as Store };
      cleanups.push(async () => {
        await fixture.store.close().catch(() => undefined);
        await fixture.dispose?.();
      });
      return fixture;
    }

    async function openPeer(fixture: StoreContractFixture): Promise<Store | undefined> {
      if (fixture.openPeer === undefined) return undefined;
      const peer = await fixture.openPeer();
      cleanups.unshift(() => peer.close());
      return peer;
    }

    function scope(tenantId: string, key = "key-1", overrides: Partial<IdempotencyScope> = {}): IdempotencyScope {
      return {
        tenantId,
        callerPluginId: "com.example.caller",
        actorUserId: "user-1",
        tool: "com.example.notes:create-record@1",
        keyHash: key,
        ...overrides,
      };
    }

    /** A sample call event with its caller, provider, tool, version and effect set. */
    function activity(tenantId: string, overrides: Partial<ActivityRecord> = {}): ActivityRecord {
      return sampleActivity(tenantId, {
        callerPluginId: "com.example.caller",
        providerPluginId: "com.example.notes",
        tool: "com.example.notes:create-record@1",
        version: 1,
        effect: "write",
        ...overrides,
      });
    }

    function settleOf(op: OperationRecord, overrides: Partial<OperationSettle> = {}): OperationSettle {
      return sampleSettle(op, activity(op.tenantId, { operationId: op.operationId }), overrides);
    }

    const tenant = () => `tenant-${randomUUID()}`;

    it("answers ping while open and refuses work after close", async () => {
      const { store } = await open();
      expect(await store.ping()).toBe(true);
      await store.close();
      expect(await store.ping()).toBe(false);
      await expect(store.getOperation(tenant(), randomUUID())).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
      await expect(store.appendActivity(activity(tenant()))).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    });

    describe("tenant configuration", () => {
      it("starts empty at version 0 and bumps the version on every change", async () => {
        const { store } = await open();
        const t = tenant();
        expect(await store.loadTenantConfig(t)).toEqual({ tenantId: t, version: 0, plugins: [], activations: [] });
        expect(await store.loadTenantConfig(t, 0)).toBeUndefined();

        await store.installPlugin(t, "com.example.notes", NOW);
        const installed = await store.loadTenantConfig(t, 0);
        expect(installed?.version).toBe(1);
        expect(installed?.plugins).toEqual([{ pluginId: "com.example.notes", enabled: true, installedAt: NOW }]);

        await store.installPlugin(t, "com.example.notes", NOW + 1);
        expect(await store.loadTenantConfig(t, 1)).toBeUndefined();

        expect(await store.setPluginEnabled(t, "com.example.notes", false, NOW + 2)).toBe(true);
        const disabled = await store.loadTenantConfig(t, 1);
        expect(disabled?.version).toBe(2);
        expect(disabled?.plugins[0]?.enabled).toBe(false);

        expect(await store.setPluginEnabled(t, "com.example.other", true, NOW)).toBe(false);
      });

      it("keeps the policy and records its change event in the same write", async () => {
        const { store } = await open();
        const t = tenant();
        const event = activity(t, { kind: "policy", phase: "change", outcome: "succeeded" });
        await store.setPolicy(t, '{"rules":[]}', event);
        const config = await store.loadTenantConfig(t);
        expect(config?.policy).toBe('{"rules":[]}');
        expect(config?.version).toBe(1);
        expect((await store.listActivity(t, { limit: 10 })).map((e) => e.id)).toEqual([event.id]);
      });

      it("never shows one tenant's configuration to another", async () => {
        const { store } = await open();
        const a = tenant();
        const b = tenant();
        await store.installPlugin(a, "com.example.notes", NOW);
        await store.setPolicy(a, '{"rules":[]}', activity(a, { kind: "policy", phase: "change" }));
        expect(await store.loadTenantConfig(b)).toEqual({ tenantId: b, version: 0, plugins: [], activations: [] });
        expect(await store.setPluginEnabled(b, "com.example.notes", false, NOW)).toBe(false);
      });
    });

    describe("plugin keys", () => {
      it("finds a key by id, revokes it once, and only in its own tenant", async () => {
        const { store } = await open();
        const t = tenant();
        const keyHash = new Uint8Array(32).fill(7);
        await store.insertPluginKey({ keyId: "k1", tenantId: t, pluginId: "com.example.caller", keyHash, createdAt: NOW });
        const found = await store.findPluginKey("k1");
        expect(found).toMatchObject({ keyId: "k1", tenantId: t, pluginId: "com.example.caller", createdAt: NOW });
        expect(Buffer.from(found!.keyHash).equals(Buffer.from(keyHash))).toBe(true);
        expect(found?.revokedAt).toBeUndefined();

        expect(await store.revokePluginKey(tenant(), "k1", NOW)).toBe(false);
        expect(await store.revokePluginKey(t, "k1", NOW + 5)).toBe(true);
        expect(await store.revokePluginKey(t, "k1", NOW + 6)).toBe(false);
        expect((await store.findPluginKey("k1"))?.revokedAt).toBe(NOW + 5);
        expect(await store.findPluginKey("missing")).toBeUndefined();
      });

      it("refuses a second key with the same id", async () => {
        const { store } = await open();
        const record = { keyId: "dup", tenantId: tenant(), pluginId: "p", keyHash: new Uint8Array(32), createdAt: NOW };
        await store.insertPluginKey(record);
        await expect(store.insertPluginKey(record)).rejects.toBeTruthy();
      });
    });

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
        await expect(
          store.settleOperation({ ...settleOf(op), state: "running" as unknown as "succeeded" }),
        ).rejects.toBeTruthy();
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
        const results = await Promise.all(
          Array.from({ length: 25 }, () => store.beginOperation({ operation: operation(t), consumeToken: consume("jti-race") })),
        );
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
        const results = await Promise.all(
          Array.from({ length: 25 }, () => store.beginOperation({ operation: operation(t), ...withKey(t, "race") })),
        );
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
      it("pages a tenant's events newest first, and one actor's events alone", async () => {
        const { store } = await open();
        const t = tenant();
        const events: ActivityRecord[] = [];
        for (let i = 0; i < 7; i++) {
          const event = activity(t, { at: NOW + i, actorUserId: i % 2 === 0 ? "alice" : "bob" });
          events.push(event);
          await store.appendActivity(event);
        }
        await store.appendActivity(activity(tenant(), { actorUserId: "alice" }));
        const newestFirst = [...events].reverse().map((e) => e.id);
        const page1 = await store.listActivity(t, { limit: 3 });
        expect(page1.map((e) => e.id)).toEqual(newestFirst.slice(0, 3));
        const page2 = await store.listActivity(t, { limit: 3, beforeId: page1[2]!.id });
        expect(page2.map((e) => e.id)).toEqual(newestFirst.slice(3, 6));
        const alice = await store.listActivity(t, { limit: 10, actorUserId: "alice" });
        expect(alice.map((e) => e.id)).toEqual(events.filter((e) => e.actorUserId === "alice").reverse().map((e) => e.id));
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

    describe("activations and the recovery policy", () => {
      it("keeps one activation per plugin, replaces it, bumps the version and records the change", async () => {
        const { store } = await open();
        const t = tenant();
        const first = activity(t, { kind: "policy", phase: "change" });
        await store.setActivation({ tenantId: t, pluginId: "com.example.gates", gates: ["a", "b"], hooks: [], guards: ["g"] }, first);
        let config = await store.loadTenantConfig(t);
        expect(config?.version).toBe(1);
        expect(config?.activations).toEqual([{ pluginId: "com.example.gates", gates: ["a", "b"], hooks: [], guards: ["g"] }]);
        await store.setActivation(
          { tenantId: t, pluginId: "com.example.gates", gates: [], hooks: ["h"], guards: [] },
          activity(t, { kind: "policy", phase: "change" }),
        );
        await store.setActivation(
          { tenantId: t, pluginId: "com.example.another", gates: ["x"], hooks: [], guards: [] },
          activity(t, { kind: "policy", phase: "change" }),
        );
        config = await store.loadTenantConfig(t, 1);
        expect(config?.version).toBe(3);
        expect(config?.activations).toEqual([
          { pluginId: "com.example.another", gates: ["x"], hooks: [], guards: [] },
          { pluginId: "com.example.gates", gates: [], hooks: ["h"], guards: [] },
        ]);
        expect((await store.listActivity(t, { limit: 10 })).map((e) => e.kind)).toEqual(["policy", "policy", "policy"]);
        expect((await store.loadTenantConfig(tenant()))?.activations).toEqual([]);
      });

      it("keeps the recovery policy beside the policy, bumping the version", async () => {
        const { store } = await open();
        const t = tenant();
        await store.setPolicy(t, '{"rules":[]}', activity(t, { kind: "policy", phase: "change" }));
        await store.setRecoveryPolicy(t, '{"rules":[{"tools":"*","retry":"none"}]}', activity(t, { kind: "policy", phase: "change" }));
        const config = await store.loadTenantConfig(t);
        expect(config).toMatchObject({ version: 2, policy: '{"rules":[]}', recoveryPolicy: '{"rules":[{"tools":"*","retry":"none"}]}' });
        expect((await store.loadTenantConfig(tenant()))?.recoveryPolicy).toBeUndefined();
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
        const lost = await store.settleOperation(
          settleOf(op, { leaseEpoch: 9, extraActivity: [lostEvent], outbox: [outboxRow(op, "lost")] }),
        );
        expect(lost).toBe("lease-lost");
        expect(await store.claimOutbox(t, 10, NOW, NOW + 1000)).toEqual([]);
        expect(await store.listActivity(t, { limit: 10 })).toEqual([]);

        const hookEvent = activity(t, { kind: "hook", outcome: "failed", errorClass: "TimeoutError", seam: "com.example.hooks:notify" });
        const rows = [outboxRow(op, "first"), outboxRow(op, "second")];
        const settle = settleOf(op, { extraActivity: [hookEvent], outbox: rows });
        expect(await store.settleOperation(settle)).toBe("settled");
        const events = await store.listActivity(t, { limit: 10 });
        expect(events.map((e) => e.id).sort()).toEqual([settle.activity.id, hookEvent.id].sort());
        expect(events.find((e) => e.id === hookEvent.id)).toEqual(hookEvent);
        const claimed = await store.claimOutbox(t, 10, NOW + 1, NOW + 1000);
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
        expect(await store.claimOutbox(tenant(), 10, NOW, NOW + 1000)).toEqual([]);
        const first = await store.claimOutbox(t, 2, NOW, NOW + 1000);
        expect(first.map((row) => row.kind)).toEqual(["r0", "r1"]);
        const second = await store.claimOutbox(t, 10, NOW + 500, NOW + 1500);
        expect(second.map((row) => row.kind)).toEqual(["r2"]);
        expect(await store.ackOutbox(tenant(), [first[0]!.id])).toBe(0);
        expect(await store.ackOutbox(t, [first[0]!.id])).toBe(1);
        // r1's claim lapsed: it comes back, counting the attempt
        const again = await store.claimOutbox(t, 10, NOW + 1000, NOW + 2000);
        expect(again.map((row) => [row.kind, row.attempts])).toEqual([["r1", 2]]);
        expect(await store.ackOutbox(t, [again[0]!.id, second[0]!.id])).toBe(2);
        expect(await store.claimOutbox(t, 10, NOW + 10_000, NOW + 11_000)).toEqual([]);
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
          Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? store : peer).claimOutbox(t, 5, NOW, NOW + 1000)),
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
        const [a, b] = await Promise.all([
          store.takeLease({ ...takeover, owner: "instance-b" }),
          peer.takeLease({ ...takeover, owner: "instance-c" }),
        ]);
        const winners = [a, b].filter((taken) => taken !== undefined);
        expect(winners).toHaveLength(1);
        expect(winners[0]).toMatchObject({ leaseEpoch: 2, recoveryAttempts: 1, leaseExpiresAt: NOW + 60_000, state: "running" });
        expect([...(winners[0]!.sealedInput ?? [])]).toEqual([1]);
        // the old owner can no longer renew or settle; the new one can
        expect(await store.renewLeases("instance-a", [{ tenantId: t, operationId: stale.operationId, leaseEpoch: 1 }], NOW + 90_000)).toBe(0);
        expect(await store.settleOperation(settleOf(stale))).toBe("lease-lost");
        expect(
          await store.settleOperation(settleOf(stale, { leaseOwner: winners[0]!.leaseOwner, leaseEpoch: 2, state: "unknown" })),
        ).toBe("settled");
        // a lease that has not expired is not taken
        expect(await store.takeLease({ ...takeover, operationId: live.operationId, owner: "instance-b" })).toBeUndefined();
        expect((await store.getOperation(t, live.operationId))?.leaseEpoch).toBe(1);
      });
    });

    describe("runs", () => {
      it("keeps a run bound to its tenant, closes it once", async () => {
        const { store } = await open();
        const t = tenant();
        const run = {
          tenantId: t,
          runId: randomUUID(),
          callerPluginId: "com.example.caller",
          actorUserId: "user-1",
          allow: ["com.example.notes:*", "com.example.mailer:send@1"],
          createdAt: NOW,
          expiresAt: NOW + 60_000,
        };
        await store.insertRun(run);
        expect(await store.getRun(t, run.runId)).toEqual(run);
        expect(await store.getRun(tenant(), run.runId)).toBeUndefined();
        expect(await store.closeRun(tenant(), run.runId, NOW + 5)).toBe(false);
        expect(await store.closeRun(t, run.runId, NOW + 5)).toBe(true);
        expect(await store.closeRun(t, run.runId, NOW + 6)).toBe(false);
        expect((await store.getRun(t, run.runId))?.closedAt).toBe(NOW + 5);
      });
    });

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
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? store : peer).createConfirmation(request(t), 3)),
        );
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
        expect(
          await store.transitionConfirmation({ tenantId: t, requestId: made.requestId, to: "expired", at: NOW + 10, when: "expired" }),
        ).toBeUndefined();
        const results = await Promise.all([approve(store, NOW + 10), approve(peer, NOW + 11)]);
        const approved = results.filter((r) => r !== undefined);
        expect(approved).toHaveLength(1);
        expect(approved[0]).toMatchObject({ status: "approved", decidedAt: expect.any(Number), tokenExpiresAt: expect.any(Number) });
        expect(approved[0]?.sealedPreview).toBeUndefined();
        expect((await store.listActivity(t, { limit: 10 })).filter((e) => e.kind === "confirmation")).toHaveLength(1);
        expect(
          await store.transitionConfirmation({ tenantId: t, requestId: made.requestId, to: "denied", at: NOW + 12, when: "live" }),
        ).toBeUndefined();

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
      expect(await store.claimOutbox(t, 10, NOW, NOW + 1)).toHaveLength(1);
    });
  });
}
