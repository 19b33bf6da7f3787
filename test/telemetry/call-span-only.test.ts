/**
 * `telemetry: { stepSpans: false }`: a traced call records its own span only (no child per step), with the
 * same attributes; providers get that span's `traceparent`, spans a provider makes nest under it, and
 * the call's metrics are recorded as always. No input in any of it.
 */
import { context, metrics, propagation, trace } from "@opentelemetry/api";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { node } from "@opentelemetry/sdk-node";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestHost, type TestHost } from "../../packages/runtime/src/testing/index.js";
import { OnDemandReader } from "./support/otel.js";

const PROVIDER = "com.example.callonly";
const SECRET_INPUT = "input-that-must-not-be-recorded";
const manifest = {
  id: PROVIDER,
  version: "1.2.3",
  permissions: ["tools:provide"],
  tools: [{ name: "look", effect: "read", inputSchema: { type: "object", properties: { q: { type: "string" } } } }],
};

const exporter = new InMemorySpanExporter();
// The Node provider: register() also sets the context manager a provider's own active spans need.
const provider = new node.NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const reader = new OnDemandReader();
const meterProvider = new MeterProvider({ readers: [reader] });
let host: TestHost;

beforeAll(async () => {
  provider.register();
  metrics.setGlobalMeterProvider(meterProvider);
  host = await createTestHost({
    runtime: { telemetry: { stepSpans: false } },
    plugins: [
      {
        manifest,
        activate: (sdk) => {
          sdk.tools.provide("look", {
            execute: (_input, ctx) => {
              // A span the provider makes, under whatever is active while it runs.
              trace.getTracer("provider").startSpan("provider lookup").end();
              return { traceparent: ctx.traceparent ?? null };
            },
          });
        },
      },
    ],
  });
});

afterAll(async () => {
  await host?.close();
  await provider.shutdown();
  await meterProvider.shutdown();
  trace.disable();
  metrics.disable();
  context.disable();
  propagation.disable();
});

describe("telemetry.stepSpans false", () => {
  it("records one span per call, no step spans, with the call's attributes; provider spans nest under it", async () => {
    const answer = await host.transport().execute({ providerId: PROVIDER, tool: "look" }, { q: SECRET_INPUT });
    const spans = exporter.getFinishedSpans();
    const call = spans.find((span) => span.name === `execute_tool ${PROVIDER}:look`);
    expect(call).toBeDefined();
    const traceId = call?.spanContext().traceId;
    const inTrace = spans.filter((span) => span.spanContext().traceId === traceId);
    // The call's span and the provider's own: nothing per step.
    expect(inTrace.map((span) => span.name).sort()).toEqual([`execute_tool ${PROVIDER}:look`, "provider lookup"]);
    const lookup = inTrace.find((span) => span.name === "provider lookup");
    expect(lookup?.parentSpanContext?.spanId).toBe(call?.spanContext().spanId);
    expect(answer.result).toEqual({ traceparent: `00-${traceId}-${call?.spanContext().spanId}-01` });
    expect(call?.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": `${PROVIDER}:look`,
      "toolpact.provider": PROVIDER,
      "toolpact.effect": "read",
      "toolpact.tool.version": 1,
      "toolpact.phase": "execute",
      "toolpact.outcome": "succeeded",
    });
    expect(typeof call?.attributes["toolpact.operation.id"]).toBe("string");

    const { resourceMetrics } = await reader.collect();
    const calls = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((metric) => metric.descriptor.name === "toolpact.calls");
    expect(calls?.dataPoints.map((point) => ({ attributes: point.attributes, value: point.value }))).toEqual([
      {
        attributes: {
          "toolpact.phase": "execute",
          "toolpact.via": "in-process",
          "gen_ai.tool.name": `${PROVIDER}:look`,
          "toolpact.effect": "read",
          "toolpact.outcome": "succeeded",
        },
        value: 1,
      },
    ]);
    const points = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics.flatMap((metric) => metric.dataPoints.map((point) => point.attributes)));
    expect(JSON.stringify({ spans: spans.map((span) => span.attributes), points })).not.toContain(SECRET_INPUT);
  });
});
