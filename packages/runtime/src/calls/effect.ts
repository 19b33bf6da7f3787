/**
 * The effect: what runs between an operation's begin and its settle, in the order it runs. The provider
 * (or a gate's answer) first; then each step takes the outcome so far and answers what it becomes. They
 * answer values and never throw, so the ledger settles every operation that began.
 */
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

/** Runs the effect of a call whose operation began: `invoke-provider`, then each step of `afterProvider`. */
export async function runEffect(call: CallAt<EffectFacts>): Promise<EffectOutcome> {
  let outcome = await invokeProvider(call);
  for (const step of afterProvider) {
    const next = step(call, outcome);
    outcome = next instanceof Promise ? await next : next;
  }
  return outcome;
}
