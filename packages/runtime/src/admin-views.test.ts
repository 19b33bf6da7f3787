/**
 * The console's activity reads over real SQLite and PostgreSQL stores: filters, the time range, the cap
 * on events shown, and the chart counting every matching call in the range (not only the events shown).
 */
import { afterEach, describe, expect, it } from "vitest";
import { ACTIVITY_CHART_BUCKETS, ADMIN_VIEW_MAX_EVENTS, createAdminViews } from "./admin-views.js";
import { createSqliteStore } from "./store/sqlite/sqlite-store.js";
import type { Store } from "./store/store.js";
import { postgresTestGate } from "./testing/index.js";
import { usePostgresHarness } from "./testing/postgres-harness.js";
import { NOW, sampleActivity } from "./testing/sample-records.js";

const MINUTE = 60_000;
const CALLS = 140;
const stores: Store[] = [];
const gate = await postgresTestGate("the console's activity reads on PostgreSQL");

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

describe("admin views on SQLite", () => {
  describeActivityViews(async () => {
    const store = await createSqliteStore({ path: ":memory:" });
    stores.push(store);
    return store;
  });
});

describe.skipIf(gate.skip !== undefined)("admin views on PostgreSQL", () => {
  const { freshSchema, open } = usePostgresHarness(gate);
  describeActivityViews(() => open({ schema: freshSchema(), poolSize: 2 }));
});

/** The activity tests over stores `openStore` makes. */
function describeActivityViews(openStore: () => Promise<Store>): void {
  /** A store with CALLS calls of tenant "t", one a minute up to NOW, every 7th refused for mallory; and a policy change. */
  async function seeded() {
    const store = await openStore();
    for (let i = 0; i < CALLS; i++) {
      const at = NOW - (CALLS - i) * MINUTE;
      const refused = i % 7 === 0;
      await store.appendActivity(
        sampleActivity("t", {
          at,
          callerPluginId: "com.example.caller",
          providerPluginId: "com.example.notes",
          tool: refused ? "com.example.notes:purge@1" : "com.example.notes:list@1",
          actorUserId: refused ? "mallory" : "alice",
          outcome: refused ? "denied" : "succeeded",
          ...(refused ? { errorCode: "PERMISSION_DENIED" } : {}),
        }),
      );
    }
    await store.appendActivity(sampleActivity("t", { at: NOW - 1, kind: "policy", phase: "change", outcome: "succeeded" }));
    return createAdminViews({ store, manifests: new Map(), clock: () => NOW });
  }

  const total = (chart: readonly { calls: number; refusals: number }[]) => ({
    calls: chart.reduce((sum, bucket) => sum + bucket.calls, 0),
    refusals: chart.reduce((sum, bucket) => sum + bucket.refusals, 0),
  });

  describe("admin views: activity", () => {
    it("shows at most `limit` events, newest first, and charts every matching call", async () => {
      const views = await seeded();
      const result = await views.activity({ tenantId: "t", limit: 50 });
      expect(result.events).toHaveLength(50);
      expect(result.events[0]?.kind).toBe("policy");
      const times = result.events.map((event) => Date.parse(event.at));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
      expect(result.chart).toHaveLength(ACTIVITY_CHART_BUCKETS);
      expect(total(result.chart)).toEqual({ calls: CALLS, refusals: CALLS / 7 });
      expect(result.truncated).toBe(false);
      expect(result.scanned).toBe(CALLS + 1);
    });

    it("filters by actor, outcome, caller, provider and tool, each field narrowing", async () => {
      const views = await seeded();
      const refused = await views.activity({ tenantId: "t", actor: "mallory", outcome: "denied" });
      expect(refused.events).toHaveLength(CALLS / 7);
      expect(refused.events.every((event) => event.actorUserId === "mallory" && event.errorCode === "PERMISSION_DENIED")).toBe(true);
      expect(total(refused.chart)).toEqual({ calls: CALLS / 7, refusals: CALLS / 7 });
      expect((await views.activity({ tenantId: "t", tool: "purge" })).events).toHaveLength(CALLS / 7);
      // A limit past the cap is held to it; here every call fits under the cap.
      expect(ADMIN_VIEW_MAX_EVENTS).toBeGreaterThan(CALLS);
      const wide = await views.activity({ tenantId: "t", caller: "com.example.caller", provider: "com.example.notes", limit: 10_000 });
      expect(wide.events).toHaveLength(CALLS);
      expect((await views.activity({ tenantId: "t", caller: "com.example.other" })).events).toEqual([]);
      expect((await views.activity({ tenantId: "t", actor: "alice", outcome: "denied" })).events).toEqual([]);
      expect((await views.activity({ tenantId: "another" })).events).toEqual([]);
    });

    it("keeps to the time range, both ends inclusive, and charts only it", async () => {
      const views = await seeded();
      const since = NOW - 100 * MINUTE;
      const until = NOW - 50 * MINUTE;
      const result = await views.activity({ tenantId: "t", since, until });
      expect(result.events).toHaveLength(51);
      expect(result.events.every((event) => Date.parse(event.at) >= since && Date.parse(event.at) <= until)).toBe(true);
      expect(total(result.chart).calls).toBe(51);
      expect(result.chart[0]?.start).toBe(since);
      expect(result.truncated).toBe(false);
    });
  });
}
