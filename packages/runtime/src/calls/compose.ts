/**
 * How a call path runs: a list of steps, each deciding one thing about the call and then handing the call
 * on to the rest with `next(call)`, or answering (or refusing) itself. The way tRPC runs a procedure's
 * middlewares and Hono composes its handlers; like Hono, a second `next()` from one step is an error.
 * `chain.ts` types the list: what each step hands on is the call with the facts it set.
 */

/** Runs the steps after the current one on `call` and resolves with what they answer. */
export type Next<TCall, TOutcome> = (call: TCall) => Promise<TOutcome>;

/** One step of a call path. Refusals are thrown; what the call answers is resolved. */
export type Step<TCall, TOutcome> = (call: TCall, next: Next<TCall, TOutcome>) => Promise<TOutcome>;

/**
 * A step whose steps after it answer something else than it does: the ledger runs the effect steps,
 * which answer the operation's outcome, and turns that outcome into the caller's answer.
 */
export type Boundary<TCall, TOutcome, TInner> = (call: TCall, next: Next<TCall, TInner>) => Promise<TOutcome>;

/** A composed list of steps: runs the first, which runs the next, and so on. */
export type Chain<TCall, TOutcome> = (call: TCall) => Promise<TOutcome>;

/** Composes `steps` into a chain. A step that calls `next()` twice, or the last step calling it, is an error. */
export function compose<TCall, TOutcome>(steps: readonly Step<TCall, TOutcome>[]): Chain<TCall, TOutcome> {
  const dispatch = (call: TCall, index: number): Promise<TOutcome> => {
    const step = steps[index];
    if (step === undefined) {
      return Promise.reject(new Error(`${steps[index - 1]?.name ?? "a step"} called next(), but it is the last step of its chain`));
    }
    let handedOn = false;
    const next: Next<TCall, TOutcome> = (handed) => {
      if (handedOn) throw new Error(`${step.name} called next() twice: a step hands the call on at most once`);
      handedOn = true;
      return dispatch(handed, index + 1);
    };
    try {
      return step(call, next);
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return (call) => dispatch(call, 0);
}

/**
 * The last step of a chain made of a boundary and the chain it wraps: `boundary` is handed `inner` as
 * its `next` (callable once), and answers for the outer chain.
 */
export function around<TCall, TOutcome, TInner>(boundary: Boundary<TCall, TOutcome, TInner>, inner: Chain<TCall, TInner>): Step<TCall, TOutcome> {
  const step: Step<TCall, TOutcome> = (call) => {
    let handedOn = false;
    return boundary(call, (handed) => {
      if (handedOn) throw new Error(`${boundary.name} called next() twice: a step hands the call on at most once`);
      handedOn = true;
      return inner(handed);
    });
  };
  Object.defineProperty(step, "name", { value: boundary.name });
  return step;
}
