/**
 * Recovery runs, counted by how each pass over an expired operation ended, on a real SQLite store and the
 * real metrics SDK: an operation left running by a crashed instance, for a plugin this host does not load,
 * is left alone (`skipped`) pass after pass.
 */
import { randomBytes } from "node:crypto";
import { metrics } from "@opentelemetry/api";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { afterAll, describe, expect, it } from "vitest";
import { createRuntime, createSqliteStore, type ToolpactRuntime } from "../../packages/runtime/src/index.js";
import { sampleOperation } from "../../packages/runtime/src/testing/sample-records.js";
import { OnDemandReader } from "./support/otel.js";

const reader = new OnDemandReader();
const provider = new MeterProvider({ readers: [reader] });
let runtime: ToolpactRuntime | undefined;

afterAll(async () => {
  await runtime?.close();
  await provider.shutdown();
  metrics.disable();
});

async function recoveryRuns(outcome: string): Promise<number> {
  const { resourceMetrics } = await reader.collect();
  const points = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).filter((metric) => metric.descriptor.name === "toolpact.recovery.runs");
  return points.flatMap((metric) => metric.dataPoints).find((point) => point.attributes["toolpact.outcome"] === outcome)?.value ?? 0;
}

describe("recovery runs", () => {
  it("are counted by outcome", async () => {
    metrics.setGlobalMeterProvider(provider);
    const store = await createSqliteStore({ path: ":memory:" });
    // Left running by a crashed instance, its lease long expired (the sample's time is in the past).
    await store.beginOperation({ operation: sampleOperation("t1", { leaseOwner: "crashed-instance" }) });
    runtime = await createRuntime({
      store,
      signingKeys: [{ kid: "test", key: randomBytes(32) }],
      storageKey: new Uint8Array(randomBytes(32)),
      actorTokens: { issuer: "test", secret: new Uint8Array(randomBytes(32)) },
      recoveryIntervalMs: 25,
    });
    for (let attempt = 0; attempt < 200 && (await recoveryRuns("skipped")) < 2; attempt++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(await recoveryRuns("skipped")).toBeGreaterThanOrEqual(2);
    expect(await recoveryRuns("recovered")).toBe(0);
  });
});
