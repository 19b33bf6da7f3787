/**
 * A store wrapper that loses one write's answer, the way a network can: the write commits and its answer
 * never arrives, or the write never arrives at all. Either way the caller sees an `UnansweredCommit`,
 * as the PostgreSQL store reports a connection that broke after it sent a write.
 */
import type { Store } from "../store/store.js";
import { UnansweredCommit } from "../store/unanswered-commit.js";

/** The writes whose answers can be lost. */
export type LosableWrite = "beginOperation" | "settleOperation" | "recordSettledOperation" | "transitionConfirmation";

/** One armed loss. */
export interface Loss {
  /** `answer`: the write commits, then its answer is lost; `request`: it never reaches the store. */
  readonly what: "answer" | "request";
  readonly write: LosableWrite;
  /** False: the store could not make sure the write will not commit later (default true). */
  readonly settled?: boolean;
}

/** Wraps stores; `lose` arms a loss for the next call of a write (on any wrapped store). */
export interface FaultyStores {
  wrap(store: Store): Store;
  /** Resolves once the armed loss happened. */
  lose(loss: Loss): Promise<void>;
}

/** Makes the wrapper of a test. */
export function createFaultyStores(): FaultyStores {
  let armed: (Loss & { readonly fired: () => void }) | undefined;
  return {
    wrap(store) {
      return new Proxy(store, {
        get(target, property, receiver) {
          const member: unknown = Reflect.get(target, property, receiver);
          if (typeof member !== "function") return member;
          const call = (member as (...args: unknown[]) => unknown).bind(target);
          if (armed === undefined || armed.write !== property) return call;
          return async (...args: unknown[]) => {
            const loss = armed;
            if (loss === undefined || loss.write !== property) return call(...args);
            armed = undefined;
            if (loss.what === "answer") await call(...args);
            loss.fired();
            throw new UnansweredCommit(loss.settled ?? true);
          };
        },
      });
    },
    lose(loss) {
      if (armed !== undefined) throw new Error("a loss is already armed: wait for it before arming another");
      return new Promise<void>((resolve) => {
        armed = { ...loss, fired: resolve };
      });
    },
  };
}
