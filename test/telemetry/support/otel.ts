/**
 * The real OpenTelemetry SDK for a test file: a tracer provider exporting to memory and a meter provider
 * read on demand, registered as the global providers (before the runtime under test is created, as an
 * application would), and the helpers that read what they recorded.
 */
import { metrics, trace } from "@opentelemetry/api";
import { AggregationTemporality, MeterProvider, MetricReader, type DataPoint, type Histogram } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";

/** A reader the test collects from when it wants the numbers. */
export class OnDemandReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The SDK as registered for one test file. */
export interface Otel {
  readonly exporter: InMemorySpanExporter;
  /** The data points of one instrument, now. */
  points(name: string): Promise<readonly DataPoint<number | Histogram>[]>;
  /** Every attribute value of every finished span and every data point, as JSON text. */
  everything(): Promise<string>;
  shutdown(): Promise<void>;
}

/** Registers the SDK globally. Call it before creating the runtime. */
export function registerOtel(): Otel {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  const collect = async () => {
    const { resourceMetrics, errors } = await reader.collect();
    if (errors.length > 0) throw new Error(`metric collection failed: ${errors.map(String).join("; ")}`);
    return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
  };
  return {
    exporter,
    async points(name) {
      const found = (await collect()).filter((metric) => metric.descriptor.name === name);
      return found.flatMap((metric) => metric.dataPoints as DataPoint<number | Histogram>[]);
    },
    async everything() {
      const spans = exporter.getFinishedSpans().map((span) => ({ name: span.name, attributes: span.attributes, status: span.status }));
      const points = (await collect()).map((metric) => ({ name: metric.descriptor.name, points: metric.dataPoints.map((point) => point.attributes) }));
      return JSON.stringify({ spans, points });
    },
    async shutdown() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      trace.disable();
      metrics.disable();
    },
  };
}

/** The spans of one trace. */
export function spansOf(exporter: InMemorySpanExporter, traceId: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
}

/** The children of `parent`, in the order they started. */
export function childrenOf(spans: readonly ReadableSpan[], parent: ReadableSpan): ReadableSpan[] {
  const id = parent.spanContext().spanId;
  return spans.filter((span) => span.parentSpanContext?.spanId === id).sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
}

/** A span tree as text, one span a line, indented under its parent, with the attributes named. */
export function printTree(spans: readonly ReadableSpan[], root: ReadableSpan, shown: readonly string[], depth = 0): string {
  const attributes = shown.filter((key) => root.attributes[key] !== undefined).map((key) => `${key}=${JSON.stringify(root.attributes[key])}`);
  const ms = (root.duration[0] * 1e3 + root.duration[1] / 1e6).toFixed(3);
  const line = `${"  ".repeat(depth)}${root.name} (${ms} ms)${attributes.length > 0 ? `  ${attributes.join(" ")}` : ""}`;
  return [line, ...childrenOf(spans, root).map((child) => printTree(spans, child, shown, depth + 1))].join("\n");
}

/** A fresh W3C trace context, as a caller's tracer would send it. */
export function callerTraceparent(): { traceparent: string; traceId: string; spanId: string } {
  const hex = (bytes: number) => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (byte) => byte.toString(16).padStart(2, "0")).join("");
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceparent: `00-${traceId}-${spanId}-01`, traceId, spanId };
}
