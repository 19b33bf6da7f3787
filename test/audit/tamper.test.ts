/**
 * Tampering with the activity table directly, on a real SQLite file and a real PostgreSQL schema: a row
 * changed, deleted, inserted below the latest checkpoint, ids reordered, a checkpoint forged or removed.
 * Each is caught by `verifyActivityChain` naming the first bad event; an untouched log verifies intact.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ActivityRecord,
  type Store,
  checkpointActivity,
  createPostgresStore,
  createSqliteStore,
  deriveAuditKey,
  storeChainSource,
  verifyActivityChain,
} from "@toolpact/runtime";
import { openTestDatabase, postgresSkipReason, type TestDatabase } from "../integration/support/postgres.js";

/** better-sqlite3 is a dependency of @toolpact/runtime only: loaded from there. */
type SqliteHandle = { prepare(sql: string): { run(...values: unknown[]): unknown }; close(): void };
const Database = createRequire(new URL("../../packages/runtime/package.json", import.meta.url))("better-sqlite3") as new (file: string) => SqliteHandle;

const key = deriveAuditKey(new Uint8Array(32).fill(7));
const NOW = Date.UTC(2026, 11, 1, 12);
const TENANT = "acme";

/** A store and a way around it: SQL on the same tables, as an attacker with database access has. */
interface Tamperable {
  readonly store: Store;
  sql(text: string, values?: readonly unknown[]): Promise<void>;
}

/** Eight events a second apart (and one of another tenant), then a checkpoint over them. */
async function seed(store: Store): Promise<ActivityRecord[]> {
  const events = Array.from({ length: 8 }, (_, index) => event(TENANT, NOW - 60_000 + index * 1000, index));
  for (const record of events) await store.appendActivity(record);
  await store.appendActivity(event("other", NOW - 59_500, 99));
  const run = await checkpointActivity(store.activityChain, key, { now: NOW, settleMs: 5000 });
  expect(run.linked).toBe(9);
  return events;
}

function event(tenantId: string, at: number, index: number): ActivityRecord {
  // UUIDv7 ids of `at`: made by hand so the test controls their order.
  const hex = at.toString(16).padStart(12, "0");
  const id = `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-${index.toString(16).padStart(12, "0")}`;
  return {
    id,
    tenantId,
    at,
    kind: "call",
    actorUserId: "u1",
    callerPluginId: "com.example.caller",
    providerPluginId: "com.example.notes",
    tool: "com.example.notes:create@1",
    phase: "execute",
    outcome: index % 3 === 0 ? "denied" : "succeeded",
    via: "http",
    authenticatedBy: "plugin-key",
  };
}

const verify = (store: Store) => verifyActivityChain(storeChainSource(store.activityChain), key.publicKey);

function tamperCases(open: () => Promise<Tamperable>) {
  it("an untouched log verifies intact; later events wait for the next checkpoint", async () => {
    const { store } = await open();
    await seed(store);
    await store.appendActivity(event(TENANT, NOW - 1000, 50));
    const report = await verify(store);
    expect(report.intact).toBe(true);
    expect(report.tenants.map((t) => [t.tenantId, t.verified, t.pending, t.latest?.seq])).toEqual([
      ["acme", 8, 1, 8],
      ["other", 1, 0, 1],
    ]);
  });

  it("a changed row is named", async () => {
    const { store, sql } = await open();
    const events = await seed(store);
    await sql("UPDATE activity SET outcome = 'succeeded' WHERE tenant_id = $1 AND id = $2", [TENANT, events[3]!.id]);
    const report = await verify(store);
    expect(report.problem).toMatchObject({ tenantId: TENANT, kind: "changed", eventId: events[3]!.id, seq: 4 });
  });

  it("a grant id set on, or changed in, a row is named (the chain covers grant_id)", async () => {
    const { store, sql } = await open();
    const events = await seed(store);
    await sql("UPDATE activity SET grant_id = 'g-forged' WHERE tenant_id = $1 AND id = $2", [TENANT, events[4]!.id]);
    const report = await verify(store);
    expect(report.problem).toMatchObject({ tenantId: TENANT, kind: "changed", eventId: events[4]!.id, seq: 5 });
  });

  it("a deleted row is named by its position and the event after it", async () => {
    const { store, sql } = await open();
    const events = await seed(store);
    await sql("DELETE FROM activity WHERE tenant_id = $1 AND id = $2", [TENANT, events[2]!.id]);
    const report = await verify(store);
    expect(report.problem).toMatchObject({ kind: "deleted", eventId: events[3]!.id, seq: 3 });
    expect(report.problem?.message).toContain(`after event ${events[1]!.id}`);
  });

  it("the checkpoint's own last row deleted is named", async () => {
    const { store, sql } = await open();
    const events = await seed(store);
    await sql("DELETE FROM activity WHERE tenant_id = $1 AND id = $2", [TENANT, events[7]!.id]);
    expect((await verify(store)).problem).toMatchObject({ kind: "deleted", eventId: events[7]!.id, seq: 8 });
  });

  it("a row inserted below the latest checkpoint is named", async () => {
    const { store, sql } = await open();
    const events = await seed(store);
    const forged = event(TENANT, NOW - 60_000 + 4500, 77);
    await store.appendActivity(forged);
    const report = await verify(store);
    expect(report.problem).toMatchObject({ kind: "inserted", eventId: forged.id });
    expect(forged.id > events[4]!.id && forged.id < events[5]!.id).toBe(true);
    void sql;
  });

  it("ids swapped between two rows are named at the first position whose content is no longer its own", async () => {
    const { store, sql } = await open();
    const events = await seed(store);
    // Swap the ids of events 2 and 5 (through a third id: the primary key stays unique on the way).
    await sql("UPDATE activity SET id = 'swap' WHERE tenant_id = $1 AND id = $2", [TENANT, events[2]!.id]);
    await sql("UPDATE activity SET id = $2 WHERE tenant_id = $1 AND id = $3", [TENANT, events[2]!.id, events[5]!.id]);
    await sql("UPDATE activity SET id = $2 WHERE tenant_id = $1 AND id = 'swap'", [TENANT, events[5]!.id]);
    const report = await verify(store);
    expect(report.problem).toMatchObject({ kind: "changed", eventId: events[2]!.id, seq: 3 });
  });

  it("a checkpoint's links cleared leave its events in no position, and the first is named", async () => {
    const { store, sql } = await open();
    const events = await seed(store);
    await sql("UPDATE activity_checkpoints SET links = NULL WHERE tenant_id = $1", [TENANT]);
    expect((await verify(store)).problem).toMatchObject({ kind: "inserted", eventId: events[0]!.id });
  });

  it("a changed row is named, and a checkpoint edited to match fails its signature", async () => {
    const { store, sql } = await open();
    const events = await seed(store);
    await sql("UPDATE activity SET outcome = 'succeeded' WHERE tenant_id = $1 AND id = $2", [TENANT, events[6]!.id]);
    expect((await verify(store)).problem).toMatchObject({ kind: "changed", eventId: events[6]!.id });
    // An attacker who recomputes every link (the chain's hash is public) still cannot sign a checkpoint.
    await sql("UPDATE activity_checkpoints SET chain_hash = 'x' WHERE tenant_id = $1", [TENANT]);
    expect((await verify(store)).problem).toMatchObject({ kind: "bad-signature", seq: 8 });
  });

  it("a deleted checkpoint leaves linked events no checkpoint covers", async () => {
    const { store, sql } = await open();
    const events = await seed(store);
    await store.appendActivity(event(TENANT, NOW - 2000, 51));
    await checkpointActivity(store.activityChain, key, { now: NOW + 10_000, settleMs: 5000 });
    await sql("DELETE FROM activity_checkpoints WHERE tenant_id = $1 AND seq = 9", [TENANT]);
    expect((await verify(store)).problem).toMatchObject({ kind: "checkpoint-missing", seq: 9 });
    void events;
  });

  it("retention is not tampering: verify starts at the oldest event left, and a log pruned past its checkpoints is empty, not broken", async () => {
    const { store } = await open();
    const events = await seed(store);
    await store.prune({ now: NOW, activityBefore: events[2]!.at });
    const report = await verify(store);
    expect(report.intact).toBe(true);
    expect(report.tenants.find((t) => t.tenantId === TENANT)).toMatchObject({ verified: 5, startsAt: 4 });
    await store.prune({ now: NOW, activityBefore: NOW });
    expect(await verify(store)).toEqual({ intact: true, tenants: [] });
  });

  it("lists each tenant once, in order: with events, and with checkpoints but every event gone", async () => {
    const { store, sql } = await open();
    await seed(store);
    await store.appendActivity(event("zeta", NOW - 2000, 60));
    await store.appendActivity(event("beta", NOW - 2000, 61));
    await store.appendActivity(event("beta", NOW - 1000, 62));
    await sql("DELETE FROM activity WHERE tenant_id = $1", ["other"]);
    expect(await store.activityChain.listTenants()).toEqual(["acme", "beta", "other", "zeta"]);
    await sql("DELETE FROM activity_checkpoints WHERE tenant_id = $1", ["other"]);
    expect(await store.activityChain.listTenants()).toEqual(["acme", "beta", "zeta"]);
  });

  it("a second checkpoint run continues the chain, and a verifier with another key refuses it", async () => {
    const { store } = await open();
    await seed(store);
    await store.appendActivity(event(TENANT, NOW - 2000, 52));
    const run = await checkpointActivity(store.activityChain, key, { now: NOW + 10_000, settleMs: 5000 });
    expect(run.checkpoints.map((c) => c.seq)).toEqual([9]);
    expect((await verify(store)).intact).toBe(true);
    const stranger = deriveAuditKey(new Uint8Array(32).fill(8));
    const report = await verifyActivityChain(storeChainSource(store.activityChain), stranger.publicKey);
    expect(report.problem).toMatchObject({ kind: "bad-signature" });
  });
}

describe("tampering with SQLite", () => {
  let dir: string;
  const opened: { store: Store; db: SqliteHandle }[] = [];
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "toolpact-audit-"));
  });
  afterAll(async () => {
    for (const { store, db } of opened) {
      db.close();
      await store.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });
  tamperCases(async () => {
    const file = path.join(dir, `${opened.length}.db`);
    const store = await createSqliteStore({ path: file });
    const db = new Database(file);
    opened.push({ store, db });
    return {
      store,
      sql: async (text, values = []) => {
        db.prepare(text.replace(/\$\d+/g, "?")).run(...orderedValues(text, values));
      },
    };
  });
});

/** SQLite's `?` takes values in order of appearance; `$n` may repeat or come out of order. */
function orderedValues(text: string, values: readonly unknown[]): unknown[] {
  return [...text.matchAll(/\$(\d+)/g)].map((match) => values[Number(match[1]) - 1]);
}

const skip = await postgresSkipReason("Audit tampering on PostgreSQL");
describe.skipIf(skip !== undefined)("tampering with PostgreSQL", () => {
  let database: TestDatabase;
  const stores: Store[] = [];
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    await database?.close();
  });
  tamperCases(async () => {
    const schema = database.freshSchema();
    const store = await createPostgresStore({ url: database.url, schema });
    stores.push(store);
    return { store, sql: async (text, values = []) => void (await database.rows(text.replaceAll("activity", `${schema}.activity`), values)) };
  });
});
