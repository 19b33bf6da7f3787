/**
 * A sampler that drops some traces: the runtime still traces (its check at creation looks for a registered
 * provider, not for a recorded probe), a dropped call makes no step spans, and a sampled one makes them all.
 * And a call made in process under an application's active span is that span's child.
 */
import { context, propagation, trace } from "@opentelemetry/api";
import { node } from "@opentelemetry/sdk-node";
import { InMemorySpanExporter, SamplingDecision, SimpleSpanProcessor, type Sampler } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestHost, type TestHost } from "../../packages/runtime/src/testing/index.js";

const PROVIDER = "com.example.sampled";
const manifest = {
  id: PROVIDER,
  version: "1.0.0",
  permissions: ["tools:provide"],
  tools: [
    { name: "kept", effect: "read", inputSchema: { type: "object" } },
    { name: "dropped", effect: "read", inputSchema: { type: "object" } },
  ],
};

/** Drops the runtime's probe and every call of `dropped`; samples the rest. */
const sampler: Sampler = {
  shouldSample: (_context, _traceId, name) => ({
    decision: name === "toolpact.probe" || name.endsWith(":dropped") ? SamplingDecision.NOT_RECORD : SamplingDecision.RECORD_AND_SAMPLED,
  }),
  toString: () => "drops the probe and :dropped",
};

const exporter = new InMemorySpanExporter();
// The Node provider: register() also sets the AsyncLocalStorage context manager an application's active spans need.
const provider = new node.NodeTracerProvider({ sampler, spanProcessors: [new SimpleSpanProcessor(exporter)] });
let host: TestHost;

beforeAll(async () => {
  provider.register();
  host = await createTestHost({
    plugins: [
      {
        manifest,
        activate: (sdk) => {
          sdk.tools.provide("kept", { execute: (_input, ctx) => ({ traceparent: ctx.traceparent ?? null }) });
          sdk.tools.provide("dropped", { execute: (_input, ctx) => ({ traceparent: ctx.traceparent ?? null }) });
        },
      },
    ],
  });
});

afterAll(async () => {
  await host?.close();
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});

describe("a sampler that drops some traces", () => {
  it("leaves tracing on when it dropped the probe; a dropped call makes no spans, a sampled one all of them", async () => {
    const transport = host.transport();
    const dropped = await transport.execute({ providerId: PROVIDER, tool: "dropped" }, {});
    expect(dropped.result).toEqual({ traceparent: null });
    expect(exporter.getFinishedSpans()).toEqual([]);
    const kept = await transport.execute({ providerId: PROVIDER, tool: "kept" }, {});
    const spans = exporter.getFinishedSpans();
    const call = spans.find((span) => span.name === `execute_tool ${PROVIDER}:kept`);
    expect(call).toBeDefined();
    expect(spans.filter((span) => span.spanContext().traceId === call?.spanContext().traceId)).toHaveLength(15);
    const invoke = spans.find((span) => span.name === "invoke-provider");
    expect(kept.result).toEqual({ traceparent: `00-${invoke?.spanContext().traceId}-${invoke?.spanContext().spanId}-01` });
  });

  it("makes a call in process under the application's active span that span's child", async () => {
    const transport = host.transport();
    const app = trace.getTracer("app");
    const parent = await app.startActiveSpan("handle request", async (span) => {
      await transport.execute({ providerId: PROVIDER, tool: "kept" }, {});
      span.end();
      return span.spanContext();
    });
    const call = exporter.getFinishedSpans().find((span) => span.name === `execute_tool ${PROVIDER}:kept` && span.spanContext().traceId === parent.traceId);
    expect(call?.parentSpanContext?.spanId).toBe(parent.spanId);
    expect(call?.attributes["toolpact.via"]).toBe("in-process");
  });
});
