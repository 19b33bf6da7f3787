/**
 * The steps of a call path, each under a span of its own when the call is traced (`call.span`), named as
 * docs/architecture.md names the step: its function's name in kebab case (`resolveTool`: `resolve-tool`).
 * An untraced call pays one property read per step.
 */
import type { CallSpan } from "./call-span.js";

type Traceable = { readonly span: CallSpan | undefined };
type AnyStep = (call: never, next: never) => Promise<unknown>;

/** A step's span name: `resolveTool` is `resolve-tool`. */
export function stepSpanName(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

/** `step`, under a span from its start until it hands the call on or answers. */
export function tracedStep<S extends AnyStep>(step: S): S {
  return traced(step, "step");
}

/** The step around the effect, under a span through its settle that holds the effect's steps. */
export function tracedAround<S extends AnyStep>(boundary: S): S {
  return traced(boundary, "around");
}

function traced<S extends AnyStep>(step: S, kind: "step" | "around"): S {
  const name = stepSpanName(step.name);
  const run = step as unknown as (call: unknown, next: (call: unknown) => Promise<unknown>) => Promise<unknown>;
  const wrapped = (call: Traceable, next: (call: unknown) => Promise<unknown>): Promise<unknown> => {
    const span = call.span;
    if (span === undefined) return run(call, next);
    return kind === "step" ? span.step(name, run, call, next) : span.around(name, run, call, next);
  };
  Object.defineProperty(wrapped, "name", { value: step.name });
  return wrapped as unknown as S;
}
