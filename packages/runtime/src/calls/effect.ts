/**
 * The effect: what runs between an operation's begin and its settle, in the order it runs. The provider
 * (or a gate's answer) first; then each step takes the outcome so far and answers what it becomes. They
 * answer values and never throw, so the ledger settles every operation that began.
 */
import type { CallSpan } from "../telemetry/call-span.js";
import { stepSpanName } from "../telemetry/step-spans.js";
import type { CallAt } from "./call.js";
import type { EffectStep } from "./chain.js";
import type { EffectOutcome } from "./outcome.js";
import { afterToolHooks } from "./steps/after-tool-hooks.js";
import { applyGuards } from "./steps/apply-guards.js";
import { invokeProvider } from "./steps/invoke-provider.js";
import { keepResult } from "./steps/keep-result.js";
import { validateOutput } from "./steps/validate-output.js";

/** The facts the effect reads: what authorization found, and the operation the ledger began. */
export type EffectFacts = "provider" | "tool" | "handler" | "seams" | "input" | "decision" | "operation";

/** After `invoke-provider`, in the order they run. */
const afterProvider: readonly EffectStep<EffectFacts>[] = [validateOutput, applyGuards, keepResult, afterToolHooks];

/** The span name of each step after `invoke-provider`. */
const afterProviderNames = afterProvider.map((step) => stepSpanName(step.name));

/** Runs the effect of a call whose operation began: `invoke-provider`, then each step of `afterProvider`. */
export async function runEffect(call: CallAt<EffectFacts>): Promise<EffectOutcome> {
  const span = call.span;
  if (span === undefined) return runPlainEffect(call);
  // Without step spans, the whole effect runs once under the call's span (plugin code's spans nest there).
  return span.stepSpans ? runTracedEffect(call, span) : span.underCall(() => runPlainEffect(call));
}

/** The effect's steps, one after the other, with no spans of their own. */
async function runPlainEffect(call: CallAt<EffectFacts>): Promise<EffectOutcome> {
  let outcome = await invokeProvider(call);
  for (const step of afterProvider) {
    const next = step(call, outcome);
    outcome = next instanceof Promise ? await next : next;
  }
  return outcome;
}

/** The effect of a traced call: each step under a span of its own, the active context while it runs. */
async function runTracedEffect(call: CallAt<EffectFacts>, span: CallSpan): Promise<EffectOutcome> {
  let outcome = await span.effect("invoke-provider", () => invokeProvider(call));
  for (const [index, step] of afterProvider.entries()) {
    const before = outcome;
    outcome = await span.effect(afterProviderNames[index] as string, () => step(call, before));
  }
  return outcome;
}
