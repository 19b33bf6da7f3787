/**
 * A grant's use is counted in the transaction that begins the operation: a grant of N calls begins at
 * most N operations (exactly 10 of 50 concurrent begins on PostgreSQL with 3 instances sharing one
 * schema); a begin that is refused for another reason (config changed, key taken) counts no use; and a
 * begin whose grant ended takes neither its idempotency key nor its confirmation token.
 */
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { createStore } from "../../packages/runtime/src/store/create-store.js";
import type { GrantRecord, OperationBegin, Store } from "../../packages/runtime/src/store/store.js";
import { postgresTestGate } from "../../packages/runtime/src/testing/index.js";
import { idempotency, token, usePostgresHarness } from "../../packages/runtime/src/testing/postgres-harness.js";
import { NOW, sampleOperation } from "../../packages/runtime/src/testing/sample-records.js";

const gate = await postgresTestGate("grant uses in the begin on PostgreSQL");

function grantFor(tenantId: string, maxCalls: number): GrantRecord {
  return {
    tenantId,
    grantId: `grant-${randomUUID()}`,
    actorUserId: "user-1",
    callerPluginId: "com.example.caller",
    tool: "com.example.notes:create-record",
    version: 1,
    schemaHash: "hash-1",
    maxCalls,
    uses: 0,
    expiresAt: NOW + 3_600_000,
    createdBy: "user-1",
    createdAt: NOW - 1000,
  };
}

function beginUnder(granted: GrantRecord, extra: Partial<OperationBegin> = {}): OperationBegin {
  const { grantId, tool, version, schemaHash } = granted;
  return { operation: sampleOperation(granted.tenantId, { operationId: randomUUID() }), useGrant: { grantId, tool, version, schemaHash }, ...extra };
}

async function startedOf(stores: readonly Store[], begins: readonly OperationBegin[]): Promise<number> {
  const results = await Promise.all(begins.map((begin, i) => stores[i % stores.length]!.beginOperation(begin)));
  for (const result of results) expect(["started", "grant-ended"]).toContain(result.status);
  return results.filter((result) => result.status === "started").length;
}

async function usesOf(store: Store, granted: GrantRecord): Promise<number> {
  return (await store.listGrants(granted.tenantId, granted.actorUserId, 100)).find((row) => row.grantId === granted.grantId)!.uses;
}

function describeBegins(open: () => Promise<Store>): void {
  it("begins exactly max_calls operations, then answers grant-ended", async () => {
    const store = await open();
    const granted = grantFor(`tenant-${randomUUID()}`, 3);
    await store.insertGrant(granted);
    expect(
      await startedOf(
        [store],
        Array.from({ length: 5 }, () => beginUnder(granted)),
      ),
    ).toBe(3);
    expect(await store.beginOperation(beginUnder(granted))).toEqual({ status: "grant-ended" });
    expect(await usesOf(store, granted)).toBe(3);
  });

  it("counts no use when the config changed or the idempotency key is taken", async () => {
    const store = await open();
    const tenantId = `tenant-${randomUUID()}`;
    const granted = grantFor(tenantId, 5);
    await store.insertGrant(granted);
    expect((await store.beginOperation(beginUnder(granted, { tenantConfigVersion: 7 }))).status).toBe("config-changed");
    expect(await store.beginOperation(beginUnder(granted, { idempotency: idempotency(tenantId, "k") }))).toEqual({ status: "started" });
    expect((await store.beginOperation(beginUnder(granted, { idempotency: idempotency(tenantId, "k") }))).status).toBe("idempotency-exists");
    expect(await usesOf(store, granted)).toBe(1);
  });

  it("takes neither the key nor the token of a begin whose grant ended, nor begins under another version", async () => {
    const store = await open();
    const tenantId = `tenant-${randomUUID()}`;
    const granted = grantFor(tenantId, 1);
    await store.insertGrant(granted);
    const newer = beginUnder(granted);
    expect(await store.beginOperation({ ...newer, useGrant: { ...newer.useGrant!, version: 2 } })).toEqual({ status: "grant-ended" });
    expect(await store.beginOperation({ ...newer, useGrant: { ...newer.useGrant!, schemaHash: "hash-2" } })).toEqual({ status: "grant-ended" });
    expect(await store.beginOperation(beginUnder(granted))).toEqual({ status: "started" });
    const keyed = { idempotency: idempotency(tenantId, "after"), consumeToken: token("jti-after") };
    expect(await store.beginOperation(beginUnder(granted, keyed))).toEqual({ status: "grant-ended" });
    expect(await store.beginOperation(beginUnder(granted, { idempotency: idempotency(tenantId, "only-key") }))).toEqual({ status: "grant-ended" });
    const { useGrant: _none, ...withoutGrant } = beginUnder(granted, keyed);
    expect(await store.beginOperation(withoutGrant)).toEqual({ status: "started" });
    expect(await usesOf(store, granted)).toBe(1);
  });
}

describe("grant uses in the begin, SQLite", () => {
  const opened: Store[] = [];
  afterAll(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });
  describeBegins(async () => {
    const store = await createStore(":memory:");
    opened.push(store);
    return store;
  });
});

describe.skipIf(gate.skip !== undefined)("grant uses in the begin, PostgreSQL", () => {
  const { instances } = usePostgresHarness(gate);
  describeBegins(async () => (await instances(1)).stores[0]!);

  it("50 concurrent begins under a 10-call grant on three instances: exactly 10 operations", async () => {
    const { stores } = await instances(3);
    const granted = grantFor(`tenant-${randomUUID()}`, 10);
    await stores[0]!.insertGrant(granted);
    expect(
      await startedOf(
        stores,
        Array.from({ length: 50 }, () => beginUnder(granted, { tenantConfigVersion: 0 })),
      ),
    ).toBe(10);
    expect(await usesOf(stores[1]!, granted)).toBe(10);
  });

  it("a revocation during a burst of begins: every operation that began counted a use, none after it", async () => {
    const { stores } = await instances(3);
    const granted = grantFor(`tenant-${randomUUID()}`, 1000);
    await stores[0]!.insertGrant(granted);
    const burst = startedOf(
      stores,
      Array.from({ length: 40 }, () => beginUnder(granted)),
    );
    const revoked = stores[2]!.revokeGrant(granted.tenantId, "user-1", granted.grantId, NOW);
    const [started, wasRevoked] = await Promise.all([burst, revoked]);
    expect(wasRevoked).toBe(true);
    expect(await usesOf(stores[0]!, granted)).toBe(started);
    expect(
      await startedOf(
        stores,
        Array.from({ length: 10 }, () => beginUnder(granted)),
      ),
    ).toBe(0);
  });
});
