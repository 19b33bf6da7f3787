/**
 * What a store tells the runtime about changes once they are committed, so that copies kept in memory
 * (tenant configs, plugin keys, tool listings, grants) and waiting callers (`confirmations.wait`) need not ask
 * the database on every call: this process's own changes always, other instances' where the store can
 * hear them (PostgreSQL: LISTEN/NOTIFY).
 */

/** One committed change. */
export type StoreChange =
  /** A tenant's config version moved: installs, enablement, policy, activations, recovery policy, a key revoked. */
  | { readonly kind: "tenant"; readonly tenantId: string }
  /** A user's grants changed: one was made or revoked (a use is not a change). */
  | { readonly kind: "grants"; readonly tenantId: string; readonly actorUserId: string }
  /** A platform confirmation request left `pending` (approved, denied, expired, cancelled). */
  | { readonly kind: "confirmation"; readonly tenantId: string; readonly requestId: string }
  /** Changes may have gone unheard (the channel to other instances was down): forget every copy. */
  | { readonly kind: "resync" };

/** The changes committed to one database, as this instance hears of them. */
export interface StoreChanges {
  /**
   * Where this instance's hearing stands. The same number twice means no change of another instance
   * can have gone unheard in between; undefined while such changes cannot be heard at all (a copy read
   * then must be checked against the database on every use).
   */
  epoch(): number | undefined;
  /** True while other instances' changes reach `subscribe` as they commit; false when only this process's do. */
  hearsOthers(): boolean;
  /** Calls `listener` with each change from now on; returns the unsubscribe. */
  subscribe(listener: (change: StoreChange) => void): () => void;
}

/** A store's side of its `StoreChanges`: how it answers `epoch` and `hearsOthers`, and `emit` for what it heard. */
export interface ChangeFeed {
  readonly changes: StoreChanges;
  /** Hands `change` to every listener (a listener that throws is skipped, not the others). */
  emit(change: StoreChange): void;
}

/** Makes the feed of one store. */
export function createChangeFeed(hearing: { readonly epoch: () => number | undefined; readonly hearsOthers: () => boolean }): ChangeFeed {
  const listeners = new Set<(change: StoreChange) => void>();
  return {
    changes: {
      epoch: hearing.epoch,
      hearsOthers: hearing.hearsOthers,
      subscribe(listener) {
        listeners.add(listener);
        return () => void listeners.delete(listener);
      },
    },
    emit(change) {
      for (const listener of [...listeners]) {
        try {
          listener(change);
        } catch {
          // A listener's bug must not keep the change from the others.
        }
      }
    },
  };
}
