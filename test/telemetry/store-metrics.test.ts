/**
 * The store's metrics, on a real SQLite store and the real metrics SDK: each commit timed by operation, a
 * failed one counted (here a write whose request never reached the store), and every other method the
 * store's own.
 */
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { afterAll, describe, expect, it } from "vitest";
import { createSqliteStore } from "../../packages/runtime/src/index.js";
import { createInstruments } from "../../packages/runtime/src/telemetry/instruments.js";
import { instrumentStore } from "../../packages/runtime/src/telemetry/store-metrics.js";
import { createFaultyStores } from "../../packages/runtime/src/testing/faulty-store.js";
import { UnansweredCommit } from "../../packages/runtime/src/store/unanswered-commit.js";
import { OnDemandReader } from "./support/otel.js";

const reader = new OnDemandReader();
const provider = new MeterProvider({ readers: [reader] });

afterAll(async () => {
  await provider.shutdown();
});

async function points(name: string) {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .filter((metric) => metric.descriptor.name === name)
    .flatMap((metric) => metric.dataPoints);
}

describe("the store's metrics", () => {
  it("time each commit by operation and count a failed one, leaving every other method the store's own", async () => {
    const sqlite = await createSqliteStore({ path: ":memory:" });
    const faulty = createFaultyStores();
    const store = instrumentStore(faulty.wrap(sqlite), createInstruments(provider.getMeter("test")));
    const lost = faulty.lose({ what: "request", write: "beginOperation" });
    await expect(store.beginOperation({} as never)).rejects.toBeInstanceOf(UnansweredCommit);
    await lost;
    await store.appendActivity({
      id: "019a0000-0000-7000-8000-000000000001",
      tenantId: "t1",
      at: 1,
      kind: "policy",
      phase: "change",
      outcome: "approved",
    } as never);
    expect(await store.ping()).toBe(true);
    expect(store.changes).toBe(sqlite.changes);

    const failures = await points("toolpact.store.failures");
    expect(failures.map((point) => [point.attributes["toolpact.store.operation"], point.value])).toEqual([["begin", 1]]);
    const commits = await points("toolpact.store.commit.duration");
    expect(commits.map((point) => [point.attributes["toolpact.store.operation"], (point.value as { count: number }).count])).toEqual([["activity", 1]]);
    await store.close();
  });
});
