/**
 * The grants table on both stores: a grant's use is one conditional update, so N calls count at most N
 * uses. Exactly N of 50 concurrent uses count on PostgreSQL with 3 instances sharing one schema; a
 * revocation during a burst stops it at once on every instance; a new tool version or schema hash, another
 * caller, another actor, or an expired grant counts nothing.
 */
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { createStore } from "../../packages/runtime/src/store/create-store.js";
import type { GrantRecord, GrantUse, Store } from "../../packages/runtime/src/store/store.js";
import { postgresTestGate } from "../../packages/runtime/src/testing/index.js";
import { usePostgresHarness } from "../../packages/runtime/src/testing/postgres-harness.js";

const NOW = 1_800_000_000_000;
const gate = await postgresTestGate("grants on PostgreSQL");

function grant(overrides: Partial<GrantRecord> = {}): GrantRecord {
  return {
    tenantId: `tenant-${randomUUID()}`,
    grantId: `grant-${randomUUID()}`,
    actorUserId: "alice",
    callerPluginId: "com.example.agent",
    tool: "com.example.tickets:file",
    version: 1,
    schemaHash: "hash-1",
    constraintsJson: JSON.stringify({ properties: { project: { const: "ops" } } }),
    maxCalls: 10,
    uses: 0,
    expiresAt: NOW + 3_600_000,
    createdBy: "alice",
    createdAt: NOW,
    ...overrides,
  };
}

function useOf(granted: GrantRecord, overrides: Partial<GrantUse> = {}): GrantUse {
  const { tenantId, grantId, actorUserId, callerPluginId, tool, version, schemaHash } = granted;
  return { tenantId, grantId, actorUserId, callerPluginId, tool, version, schemaHash, now: NOW + 1000, ...overrides };
}

async function countUses(stores: readonly Store[], use: GrantUse, calls: number): Promise<number> {
  const results = await Promise.all(Array.from({ length: calls }, (_, i) => stores[i % stores.length]!.useGrant(use)));
  return results.filter(Boolean).length;
}

function describeBinding(open: () => Promise<Store>): void {
  it("keeps a grant as written and lists the actor's grants only, newest first", async () => {
    const store = await open();
    const first = grant();
    const second = grant({ tenantId: first.tenantId, grantId: "grant-z", createdAt: NOW + 5, maxCalls: undefined });
    const { maxCalls: _drop, ...withoutMax } = second;
    await store.insertGrant(first);
    await store.insertGrant(withoutMax);
    await store.insertGrant(grant({ tenantId: first.tenantId, actorUserId: "bob", createdBy: "bob" }));
    expect(await store.listGrants(first.tenantId, "alice", 10)).toEqual([withoutMax, first]);
    expect(await store.listGrants(first.tenantId, "alice", 1)).toEqual([withoutMax]);
    expect(await store.listGrants("another-tenant", "alice", 10)).toEqual([]);
  });

  it("counts exactly max_calls uses, then none", async () => {
    const store = await open();
    const granted = grant({ maxCalls: 3 });
    await store.insertGrant(granted);
    expect(await countUses([store], useOf(granted), 5)).toBe(3);
    expect((await store.listGrants(granted.tenantId, "alice", 1))[0]!.uses).toBe(3);
  });

  it("counts nothing for another binding, a new version or schema hash, after expiry, or after revocation", async () => {
    const store = await open();
    const granted = grant();
    await store.insertGrant(granted);
    const refused: Partial<GrantUse>[] = [
      { version: 2 },
      { schemaHash: "hash-2" },
      { callerPluginId: "com.example.other" },
      { actorUserId: "bob" },
      { tool: "com.example.tickets:close" },
      { tenantId: "another-tenant" },
      { now: granted.expiresAt },
    ];
    for (const overrides of refused) expect(await store.useGrant(useOf(granted, overrides))).toBe(false);
    expect(await store.revokeGrant(granted.tenantId, "bob", granted.grantId, NOW + 2000)).toBe(false);
    expect(await store.useGrant(useOf(granted))).toBe(true);
    expect(await store.revokeGrant(granted.tenantId, "alice", granted.grantId, NOW + 2000)).toBe(true);
    expect(await store.revokeGrant(granted.tenantId, "alice", granted.grantId, NOW + 3000)).toBe(false);
    expect(await store.useGrant(useOf(granted))).toBe(false);
    const [after] = await store.listGrants(granted.tenantId, "alice", 1);
    expect(after).toMatchObject({ uses: 1, revokedAt: NOW + 2000 });
  });
}

describe("grants on SQLite", () => {
  const opened: Store[] = [];
  describeBinding(async () => {
    const store = await createStore(":memory:");
    opened.push(store);
    return store;
  });
  afterAll(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });
});

describe.skipIf(gate.skip !== undefined)("grants on PostgreSQL", () => {
  const { instances } = usePostgresHarness(gate);
  describeBinding(async () => (await instances(1)).stores[0]!);

  it("50 concurrent uses of a 10-call grant on three instances: exactly 10 count", async () => {
    const { stores } = await instances(3);
    const granted = grant({ maxCalls: 10 });
    await stores[0]!.insertGrant(granted);
    expect(await countUses(stores, useOf(granted), 50)).toBe(10);
    expect((await stores[2]!.listGrants(granted.tenantId, "alice", 1))[0]!.uses).toBe(10);
  });

  it("a revocation during a burst stops it on every instance at once", async () => {
    const { stores } = await instances(3);
    const granted = grant({ maxCalls: 1000 });
    await stores[0]!.insertGrant(granted);
    const before = await countUses(stores, useOf(granted), 20);
    const burst = countUses(stores, useOf(granted), 30);
    const revoked = stores[1]!.revokeGrant(granted.tenantId, "alice", granted.grantId, NOW + 500);
    const [during, wasRevoked] = await Promise.all([burst, revoked]);
    expect(before).toBe(20);
    expect(wasRevoked).toBe(true);
    // Every use that counted committed before the revocation; none after it, on any instance.
    expect(await countUses(stores, useOf(granted), 30)).toBe(0);
    const [after] = await stores[0]!.listGrants(granted.tenantId, "alice", 1);
    expect(after!.uses).toBe(20 + during);
  });
});
