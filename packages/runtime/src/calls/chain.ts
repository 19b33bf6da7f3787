/**
 * The call path's steps, typed by the facts they read and set. A step's type names what it reads (`N`)
 * and what it adds (`A`); a chain is built step by step, each `step` checking that every fact the step
 * reads was set by a step before it. Reading a fact no earlier step set does not compile, as tRPC's
 * growing context: the checks of `call.ts`'s old run-time `unset()` moved to the compiler.
 */
import { tracedStep } from "../telemetry/step-spans.js";
import type { CallAt, FactName, Facts } from "./call.js";
import { around, compose, type Next, type Step as UntypedStep } from "./compose.js";
import type { EffectOutcome } from "./outcome.js";

export type { Next };

/** A step any chain may hold (whatever it answers): reads the facts `N`, hands on the call with `A` set too. */
export type Step<N extends FactName, A extends FactName = never> = <T>(call: CallAt<N>, next: Next<CallAt<N | A>, T>) => Promise<T>;

/** A step of a chain answering `TOutcome`. */
export type StepOf<TOutcome, N extends FactName, A extends FactName = never> = (call: CallAt<N>, next: Next<CallAt<N | A>, TOutcome>) => Promise<TOutcome>;

/** The last step of a chain: it answers. */
export type LastStep<TOutcome, N extends FactName> = (call: CallAt<N>) => Promise<TOutcome>;

/**
 * A step whose steps after it answer `TInner` (the effect's outcome), turned into its own `TOutcome`. It
 * hands on the call it was given (`C`, with whatever facts it holds) with `A` set too: the effect reads more
 * than the boundary does.
 */
export type Boundary<TOutcome, TInner, N extends FactName, A extends FactName = never> = <C extends CallAt<N>>(
  call: C,
  next: Next<C & Facts<A>, TInner>,
) => Promise<TOutcome>;

/** An effect step after the provider: takes the outcome so far and answers the outcome it becomes (never throws). */
export type EffectStep<N extends FactName> = (call: CallAt<N>, outcome: EffectOutcome) => EffectOutcome | Promise<EffectOutcome>;

/** A chain of steps, ready to run a call whose facts `K` are set. */
export type Chain<K extends FactName, TOutcome> = (call: CallAt<K>) => Promise<TOutcome>;

/** A chain being built: `K` are the facts set once the steps so far ran. */
export interface ChainBuilder<K0 extends FactName, K extends FactName, TOutcome> {
  /** Adds a step; it may read only facts set before it. */
  step<N extends K, A extends FactName>(step: Step<N, A>): ChainBuilder<K0, K | A, TOutcome>;
  step<N extends K, A extends FactName>(step: StepOf<TOutcome, N, A>): ChainBuilder<K0, K | A, TOutcome>;
  /** Ends the chain with a step that answers. */
  last<N extends K>(step: LastStep<TOutcome, N>): Chain<K0, TOutcome>;
  /**
   * Ends the chain with a boundary around `inner`, which runs on the call with the boundary's facts set too.
   * The boundary traces itself (`tracedAround`): it may be a choice between steps, each with its own name.
   */
  around<N extends K, A extends FactName, TInner>(
    boundary: Boundary<TOutcome, TInner, N, A>,
    inner: (call: CallAt<K | A>) => Promise<TInner>,
  ): Chain<K0, TOutcome>;
}

/** Starts a chain answering `TOutcome` for calls whose facts `K0` are already set (none, unless recovery). */
export function chain<TOutcome, K0 extends FactName = never>(): ChainBuilder<K0, K0, TOutcome> {
  return builder<K0, K0, TOutcome>([]);
}

type AnyCall = CallAt<never>;

function builder<K0 extends FactName, K extends FactName, TOutcome>(steps: readonly UntypedStep<AnyCall, TOutcome>[]): ChainBuilder<K0, K, TOutcome> {
  // The types above decided what may follow what; at run time a step is a step, under a span when its call is traced.
  const untyped = (step: unknown) => tracedStep(step as UntypedStep<AnyCall, TOutcome>);
  return {
    step: (step: unknown) => builder([...steps, untyped(step)]),
    last: (step) => compose([...steps, untyped(step)]) as Chain<K0, TOutcome>,
    around: (boundary, inner) =>
      compose([...steps, around(boundary as never, inner as (call: AnyCall) => Promise<unknown>) as UntypedStep<AnyCall, TOutcome>]) as Chain<K0, TOutcome>,
  } as ChainBuilder<K0, K, TOutcome>;
}
