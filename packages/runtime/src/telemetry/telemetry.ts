/**
 * A runtime's telemetry: traces and metrics through `@opentelemetry/api` when the application registered
 * a tracer or meter provider before creating the runtime, nothing otherwise. Decided once, at creation:
 * with neither registered (or the API not installed), `observe` answers undefined and no call does any
 * telemetry work past that check.
 */
import type { Attributes, Tracer } from "@opentelemetry/api";
import { PLUGIN_ID_MAX_LENGTH, PLUGIN_ID_PATTERN, TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN, isToolpactError, type ToolRef } from "@toolpact/contract";
import { outcomeOf } from "../activity/error-class.js";
import type { Principal } from "../api.js";
import type { CallFacts } from "../calls/call.js";
import type { TelemetryOptions } from "../options.js";
import type { Store } from "../store/store.js";
import { ATTR } from "./attributes.js";
import { AttributeSets, CallMetrics } from "./call-metrics.js";
import { CallSpan } from "./call-span.js";
import { createInstruments, type Instruments } from "./instruments.js";
import { loadOtelApi, type OtelApi } from "./otel-api.js";
import { instrumentStore } from "./store-metrics.js";

const SCOPE = "@toolpact/runtime";

/** How a recovery pass over an expired operation ended. */
export type RecoveryRun = "recovered" | "skipped" | "failed";

/** What a runtime's telemetry does. */
export class Telemetry {
  /** No telemetry: what a runtime without a registered provider (or without the API) holds. */
  static readonly off = new Telemetry(undefined, undefined, undefined, false);

  readonly #api: OtelApi | undefined;
  readonly #tracer: Tracer | undefined;
  readonly #instruments: Instruments | undefined;
  readonly #stepSpans: boolean;
  /** Metric attributes by what they hold, made once each and reused (their kinds are few: phases, vias, tools, outcomes, codes). */
  readonly #attributeSets = new AttributeSets();

  private constructor(api: OtelApi | undefined, tracer: Tracer | undefined, instruments: Instruments | undefined, stepSpans: boolean) {
    this.#api = api;
    this.#tracer = tracer;
    this.#instruments = instruments;
    this.#stepSpans = stepSpans;
  }

  /**
   * The telemetry of a runtime created now: traces when a tracer provider is registered (a probe span,
   * never ended, says so: the API's no-op tracer makes an invalid span context, an SDK a valid one even
   * when its sampler drops the span), metrics when a meter provider is.
   */
  static async create(options: TelemetryOptions = {}): Promise<Telemetry> {
    const api = await loadOtelApi();
    if (api === undefined) return Telemetry.off;
    const tracer = api.trace.getTracer(SCOPE);
    const probe = tracer.startSpan("toolpact.probe", { root: true });
    const tracing = probe.isRecording() || api.isSpanContextValid(probe.spanContext());
    const meter = api.metrics.getMeterProvider().getMeter(SCOPE);
    const metering = !(meter instanceof api.createNoopMeter().constructor);
    if (!tracing && !metering) return Telemetry.off;
    return new Telemetry(api, tracing ? tracer : undefined, metering ? createInstruments(meter) : undefined, options.stepSpans !== false);
  }

  /** True when calls are traced. */
  get tracing(): boolean {
    return this.#tracer !== undefined;
  }

  /** Starts observing one call; undefined when nothing is recorded. */
  observe(principal: Principal, phase: "preview" | "execute", ref: ToolRef): CallObservation | undefined {
    if (this.#api === undefined) return undefined;
    // Metrics name the tool once it resolved (a caller's made-up names would be unbounded labels).
    const via = principal.via ?? "in-process";
    const metrics = new CallMetrics(this.#instruments, this.#attributeSets, phase, via);
    if (this.#tracer === undefined) return new CallObservation(undefined, metrics);
    const trace = principal.traceContext;
    const spanAttributes: Attributes = { [ATTR.phase]: phase, [ATTR.via]: via, [ATTR.caller]: principal.callerPluginId, [ATTR.tenant]: principal.tenantId };
    // The span names the tool as the call did, when the name is well formed (else once it resolves).
    const named = wellFormedName(ref);
    if (named !== undefined) {
      spanAttributes[ATTR.toolName] = named;
      spanAttributes[ATTR.provider] = ref.providerId;
    }
    const toolName = named ?? "tool";
    if (phase === "execute") spanAttributes[ATTR.operationName] = "execute_tool";
    if (principal.via === "mcp") spanAttributes[ATTR.mcpMethod] = "tools/call";
    if (trace?.jsonrpcRequestId !== undefined) spanAttributes[ATTR.jsonrpcRequestId] = trace.jsonrpcRequestId;
    const span = CallSpan.start(this.#api, this.#tracer, {
      name: `${phase}_tool ${toolName}`,
      attributes: spanAttributes,
      principal,
      stepSpans: this.#stepSpans,
    });
    return span === undefined && this.#instruments === undefined ? undefined : new CallObservation(span, metrics);
  }

  /** Counts one recovery pass. */
  recovered(run: RecoveryRun): void {
    this.#instruments?.recoveryRuns.add(1, { [ATTR.outcome]: run });
  }

  /** The store, timing its commits and counting their failures when metrics are recorded; else the store itself. */
  store(store: Store): Store {
    return this.#instruments === undefined ? store : instrumentStore(store, this.#instruments);
  }
}

/** One call being observed: its span (when traced) and its metrics (when recorded). */
export class CallObservation {
  readonly span: CallSpan | undefined;
  readonly #metrics: CallMetrics;

  constructor(span: CallSpan | undefined, metrics: CallMetrics) {
    this.span = span;
    this.#metrics = metrics;
  }

  /**
   * The call ended: answered (`error` undefined) or refused or failed with `error`. `facts` are what the
   * call learned on its way (any may be missing: it may have been refused before).
   */
  end(facts: Partial<CallFacts>, phase: "preview" | "execute", error?: unknown): void {
    const code = error === undefined ? undefined : isToolpactError(error) ? error.code : "INTERNAL";
    const outcome = code === undefined ? (phase === "preview" ? "previewed" : "succeeded") : isToolpactError(error) ? outcomeOf(error.code) : "failed";
    const { tool, decision, operation } = facts;
    const span = this.span;
    if (span !== undefined) {
      const more: Attributes = { [ATTR.outcome]: outcome };
      if (tool !== undefined) {
        more[ATTR.toolName] = `${tool.providerId}:${tool.declaration.name}`;
        more[ATTR.provider] = tool.providerId;
        more[ATTR.effect] = tool.declaration.effect;
        more[ATTR.version] = tool.declaration.version;
      }
      const operationId = operation?.operationId ?? (isToolpactError(error) ? error.data.operationId : undefined);
      if (typeof operationId === "string") more[ATTR.operationId] = operationId;
      if (decision?.confirm === true) more[ATTR.confirmationMode] = decision.mode;
      if (decision?.answer !== undefined) more[ATTR.answeredBy] = decision.answer.seam;
      if (code !== undefined) {
        more[ATTR.refusalCode] = code;
        more[ATTR.errorType] = code;
      }
      span.set(more);
      span.end(code);
    }
    this.#metrics.end(tool, outcome, code);
  }
}

/** `<provider>:<tool>` from a ref whose names are well formed; undefined otherwise. */
function wellFormedName(ref: ToolRef): string | undefined {
  const providerId: unknown = ref?.providerId;
  const tool: unknown = ref?.tool;
  if (typeof providerId !== "string" || typeof tool !== "string" || providerId.length > PLUGIN_ID_MAX_LENGTH || tool.length > TOOL_NAME_MAX_LENGTH)
    return undefined;
  return PLUGIN_ID_PATTERN.test(providerId) && TOOL_NAME_PATTERN.test(tool) ? `${providerId}:${tool}` : undefined;
}
