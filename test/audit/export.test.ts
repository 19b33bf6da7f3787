/**
 * A windowed export over several checkpoints: it widens to the checkpoint before `since` and the first
 * at or after `until`, so the exported events verify offline; events newer than any checkpoint come
 * without their chain columns; and an export of one tenant holds nothing of another.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  type ActivityCheckpointRecord,
  type ActivityRecord,
  type ChainedActivityRecord,
  type Store,
  checkpointActivity,
  createSqliteStore,
  deriveAuditKey,
  exportActivity,
  listedChainSource,
  verifyActivityChain,
} from "@toolpact/runtime";

const key = deriveAuditKey(new Uint8Array(32).fill(3));
const MINUTE = 60_000;
const START = Date.UTC(2026, 10, 1);

function event(tenantId: string, at: number): ActivityRecord {
  const hex = at.toString(16).padStart(12, "0");
  return { id: `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-000000000000`, tenantId, at, kind: "policy", phase: "change", outcome: "succeeded" };
}

let store: Store;
afterEach(async () => store?.close());

async function exported(query: Parameters<typeof exportActivity>[1]) {
  const events: ChainedActivityRecord[] = [];
  const checkpoints: ActivityCheckpointRecord[] = [];
  for await (const record of exportActivity(store.activityChain, query)) {
    if (record.type === "event") events.push(record.event);
    else checkpoints.push(record.checkpoint);
  }
  return { events, checkpoints };
}

describe("exportActivity", () => {
  it("widens a window to the checkpoints around it, and what it exports verifies offline", async () => {
    store = await createSqliteStore({ path: ":memory:" });
    // 12 events a minute apart, checkpointed in three runs: after minutes 3, 7 and 10; two newer events stay pending.
    for (let minute = 0; minute < 12; minute++) await store.appendActivity(event("acme", START + minute * MINUTE));
    await store.appendActivity(event("other", START + 5 * MINUTE + 1));
    for (const upTo of [3, 7, 10]) await checkpointActivity(store.activityChain, key, { now: START + upTo * MINUTE + 1, settleMs: 0 });
    const all = await store.activityChain.listCheckpoints("acme");
    expect(all.map((checkpoint) => checkpoint.seq)).toEqual([4, 8, 11]);

    const window = await exported({ tenantId: "acme", since: START + 5 * MINUTE, until: START + 6 * MINUTE });
    // From after checkpoint 4 (the last before the window) to checkpoint 8 (the first at or after its end).
    expect(window.checkpoints.map((checkpoint) => checkpoint.seq)).toEqual([4, 8]);
    expect(window.events.map((exportedEvent) => exportedEvent.chainSeq)).toEqual([5, 6, 7, 8]);
    expect((await verifyActivityChain(listedChainSource(window.events, window.checkpoints), key.publicKey)).intact).toBe(true);

    const tail = await exported({ tenantId: "acme", since: START + 9 * MINUTE });
    expect(tail.checkpoints.map((checkpoint) => checkpoint.seq)).toEqual([8, 11]);
    expect(tail.events.map((exportedEvent) => exportedEvent.chainSeq)).toEqual([9, 10, 11, undefined]);
    const report = await verifyActivityChain(listedChainSource(tail.events, tail.checkpoints), key.publicKey);
    expect(report).toMatchObject({ intact: true, tenants: [{ tenantId: "acme", verified: 3, pending: 1, startsAt: 9 }] });

    const everything = await exported({});
    expect(new Set(everything.events.map((exportedEvent) => exportedEvent.tenantId))).toEqual(new Set(["acme", "other"]));
    expect((await verifyActivityChain(listedChainSource(everything.events, everything.checkpoints), key.publicKey)).intact).toBe(true);
    // Dropping an event from the middle of a window is caught offline too.
    const cut = window.events.filter((exportedEvent) => exportedEvent.chainSeq !== 6);
    expect((await verifyActivityChain(listedChainSource(cut, window.checkpoints), key.publicKey)).problem).toMatchObject({ kind: "deleted", seq: 6 });
  });
});
