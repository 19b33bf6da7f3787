/**
 * The steps of a call path, each under a span of its own when the call is traced (`call.span`), named as
 * docs/architecture.md names the step: its function's name in kebab case (`resolveTool`: `resolve-tool`).
 * An untraced call pays one property read per step.
 */
import type { CallSpan } from "./call-span.js";

type Traceable = { readonly span: CallSpan | undefined };
/** Marks a step already wrapped (a chain wraps each step it is given; one wrapped before keeps its own span). */
const TRACED = Symbol("traced step");
type AnyStep = (call: never, next: never) => Promise<unknown>;

/** A step's span name: `resolveTool` is `resolve-tool`. */
export function stepSpanName(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

/** `step`, under a span from its start until it hands the call on or answers. */
export function tracedStep<S extends AnyStep>(step: S): S {
  return traced(step, "step");
}

/**
 * A step that works around the rest of its chain (the ledger around the effect, request-confirmation
 * around the preview's summary): under a span through its end that holds the later steps' spans.
 */
export function tracedAround<S extends AnyStep>(boundary: S): S {
  return traced(boundary, "around");
}

function traced<S extends AnyStep>(step: S, kind: "step" | "around"): S {
  if ((step as { [TRACED]?: true })[TRACED]) return step;
  const name = stepSpanName(step.name);
  const run = step as unknown as (call: unknown, next: (call: unknown) => Promise<unknown>) => Promise<unknown>;
  const wrapped = (call: Traceable, next: (call: unknown) => Promise<unknown>): Promise<unknown> => {
    const span = call.span;
    if (span === undefined) return run(call, next);
    return kind === "step" ? span.step(name, run, call, next) : span.around(name, run, call, next);
  };
  Object.defineProperty(wrapped, "name", { value: step.name });
  Object.defineProperty(wrapped, TRACED, { value: true });
  return wrapped as unknown as S;
}
