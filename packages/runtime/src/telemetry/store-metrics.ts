/**
 * The store as the runtime's metrics see it: each commit on a call's path timed (`toolpact.store.commit.duration`),
 * each failed one counted (`toolpact.store.failures`), and each confirmation request decided measured for
 * how long it waited (`toolpact.confirmation.wait.duration`). Every other method is the store's own.
 */
import type { ConfirmationRecord, Store } from "../store/store.js";
import { ATTR } from "./attributes.js";
import type { Instruments } from "./instruments.js";

/** The commits timed, by the name their metrics carry. */
const COMMITS = {
  beginOperation: "begin",
  settleOperation: "settle",
  recordSettledOperation: "record",
  appendActivity: "activity",
  createConfirmation: "confirmation",
  transitionConfirmation: "decision",
} as const satisfies Partial<Record<keyof Store, string>>;

type Commit = keyof typeof COMMITS;

/** `store`, its commits measured into `instruments`. */
export function instrumentStore(store: Store, instruments: Instruments): Store {
  const timed = new Map<PropertyKey, unknown>();
  for (const [method, operation] of Object.entries(COMMITS) as [Commit, string][]) {
    // Looked up at each call: the store may be a wrapper that answers differently over time.
    const original = (...args: unknown[]) => (store[method] as (...args: unknown[]) => Promise<unknown>).apply(store, args);
    const attributes = { [ATTR.storeOperation]: operation };
    timed.set(method, async (...args: unknown[]) => {
      const started = performance.now();
      try {
        const answer = await original(...args);
        instruments.storeCommitDuration.record((performance.now() - started) / 1000, attributes);
        if (method === "transitionConfirmation") recordWait(instruments, answer as ConfirmationRecord | undefined);
        return answer;
      } catch (error) {
        instruments.storeFailures.add(1, attributes);
        throw error;
      }
    });
  }
  // The store's own methods, bound to it (a class's private fields need it as `this`), bound once each
  // (again only when the store answers a different function, as a wrapper may).
  const bound = new Map<PropertyKey, { readonly method: unknown; readonly bound: unknown }>();
  return new Proxy(store, {
    get(target, property) {
      const own = timed.get(property);
      if (own !== undefined) return own;
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      const known = bound.get(property);
      if (known?.method === value) return known.bound;
      const method = value.bind(target);
      bound.set(property, { method: value, bound: method });
      return method;
    },
  });
}

/** A request decided (or expired, or withdrawn) by this transition: how long it had waited. */
function recordWait(instruments: Instruments, record: ConfirmationRecord | undefined): void {
  if (record === undefined || record.decidedAt === undefined || record.status === "pending") return;
  instruments.confirmationWait.record(Math.max(0, record.decidedAt - record.createdAt) / 1000, { [ATTR.decision]: record.status });
}
