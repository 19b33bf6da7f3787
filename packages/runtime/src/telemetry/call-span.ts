/**
 * One call's spans: the call's own (`execute_tool <tool>` or `preview_tool <tool>`), and a child per step
 * of its chain, named as the step is. A step's span lasts until it hands the call on (as middleware spans
 * do elsewhere) or answers; the span of the step around the effect (`ledger` or `record-read`) lasts
 * through the settle, with the effect's steps as its children. Parents are passed explicitly, so the tree
 * holds without a context manager; plugin code runs in its step's context, so spans it makes nest there.
 */
import type { Attributes, Context, Span, Tracer } from "@opentelemetry/api";
import { isToolpactError } from "@toolpact/contract";
import type { Principal } from "../api.js";
import { ATTR } from "./attributes.js";
import type { OtelApi } from "./otel-api.js";
import { formatTraceparent, parseTraceparent, type CallTraceContext } from "./trace-context.js";

/** A step as the chain runs it: called with the call and the rest of the chain. */
type AnyStep = (call: unknown, next: (call: unknown) => Promise<unknown>) => Promise<unknown>;

/** Each call's root span and the context its step spans are made in. */
export class CallSpan {
  readonly #api: OtelApi;
  readonly #tracer: Tracer;
  readonly #root: Span;
  /** Where the next step span goes: the call's span, or the step around the effect while it runs. */
  #parent: Context;
  /** The innermost open span: the one plugin code running now is under. */
  #current: Span;
  /** False: the call's span only, its steps run without spans of their own. */
  readonly #stepSpans: boolean;

  private constructor(api: OtelApi, tracer: Tracer, root: Span, parent: Context, stepSpans: boolean) {
    this.#api = api;
    this.#tracer = tracer;
    this.#root = root;
    this.#stepSpans = stepSpans;
    this.#parent = api.trace.setSpan(parent, root);
    this.#current = root;
  }

  /**
   * Starts a call's span under the caller's trace (or the active context); undefined when the sampler did
   * not record it (then its steps make no spans either: they would not be recorded). `stepSpans` false:
   * its steps make none at all.
   */
  static start(
    api: OtelApi,
    tracer: Tracer,
    about: { readonly name: string; readonly attributes: Attributes; readonly principal: Principal; readonly stepSpans: boolean },
  ): CallSpan | undefined {
    const parent = remoteParent(api, about.principal.traceContext) ?? api.context.active();
    const root = tracer.startSpan(about.name, { kind: api.SpanKind.INTERNAL, attributes: about.attributes }, parent);
    return root.isRecording() ? new CallSpan(api, tracer, root, parent, about.stepSpans) : undefined;
  }

  /** Sets attributes on the call's span. */
  set(attributes: Attributes): void {
    this.#root.setAttributes(attributes);
  }

  /** Ends the call's span; `code` when it was refused or failed. */
  end(code: string | undefined): void {
    if (code !== undefined) this.#root.setStatus({ code: this.#api.SpanStatusCode.ERROR, message: code });
    this.#root.end();
  }

  /** The W3C trace context plugin code running now may pass on: its step's span. */
  traceContext(): CallTraceContext {
    const context = this.#current.spanContext();
    const traceparent = formatTraceparent(context);
    const tracestate = context.traceState?.serialize();
    return tracestate === undefined || tracestate === "" ? { traceparent } : { traceparent, tracestate };
  }

  /** Runs a chain step under a span of its own, ended when it hands the call on or answers. */
  step(name: string, step: AnyStep, call: unknown, next: (call: unknown) => Promise<unknown>): Promise<unknown> {
    if (!this.#stepSpans) return step(call, next);
    const span = this.#start(name);
    let open = true;
    const end = (error?: unknown): void => {
      if (!open) return;
      open = false;
      this.#end(span, error);
    };
    let answer: Promise<unknown>;
    try {
      answer = step(call, (handed) => {
        end();
        return next(handed);
      });
    } catch (error) {
      end(error);
      throw error;
    }
    return Promise.resolve(answer).then(
      (value) => {
        end();
        return value;
      },
      (error: unknown) => {
        end(error);
        throw error;
      },
    );
  }

  /** Runs the step around the effect under a span that holds the effect's steps, through its settle. */
  async around(name: string, boundary: AnyStep, call: unknown, next: (call: unknown) => Promise<unknown>): Promise<unknown> {
    if (!this.#stepSpans) return boundary(call, next);
    const span = this.#start(name);
    const outer = this.#parent;
    this.#parent = this.#api.trace.setSpan(outer, span);
    try {
      const answer = await boundary(call, next);
      this.#end(span, undefined);
      return answer;
    } catch (error) {
      this.#end(span, error);
      throw error;
    } finally {
      this.#parent = outer;
    }
  }

  /** False when the call records its own span only (`telemetry.stepSpans: false`). */
  get stepSpans(): boolean {
    return this.#stepSpans;
  }

  /** Runs `run` with the call's span as the active context (spans plugin code makes nest under it). */
  underCall<T>(run: () => Promise<T>): Promise<T> {
    return this.#api.context.with(this.#parent, run);
  }

  /** Runs one of the effect's steps under a span of its own, as the active context (plugin code's spans nest in it). */
  async effect<T>(name: string, run: () => T | Promise<T>): Promise<T> {
    const span = this.#start(name);
    try {
      const answer = await this.#api.context.with(this.#api.trace.setSpan(this.#parent, span), run);
      this.#end(span, undefined);
      return answer;
    } catch (error) {
      this.#end(span, error);
      throw error;
    }
  }

  #start(name: string): Span {
    const span = this.#tracer.startSpan(name, undefined, this.#parent);
    this.#current = span;
    return span;
  }

  #end(span: Span, error: unknown): void {
    if (error !== undefined) {
      const code = isToolpactError(error) ? error.code : "INTERNAL";
      span.setAttribute(ATTR.errorType, code);
      span.setStatus({ code: this.#api.SpanStatusCode.ERROR, message: code });
    }
    span.end();
    if (this.#current === span) this.#current = this.#api.trace.getSpan(this.#parent) ?? this.#root;
  }
}

/** The caller's span as the parent of the call's, from a valid `traceparent`. */
function remoteParent(api: OtelApi, traceContext: CallTraceContext | undefined): Context | undefined {
  const parsed = parseTraceparent(traceContext?.traceparent);
  if (parsed === undefined) return undefined;
  const tracestate = traceContext?.tracestate;
  return api.trace.setSpanContext(api.ROOT_CONTEXT, {
    ...parsed,
    isRemote: true,
    ...(tracestate === undefined ? {} : { traceState: api.createTraceState(tracestate) }),
  });
}
