import type { PluginKeyLookup, Store } from "../store/store.js";
import { TrustedCopies } from "../store/trusted-copies.js";

/** Keys kept at most; the oldest goes first. */
const CACHE_LIMIT = 10_000;

/**
 * Plugin keys as last read from the store, so that authentication need not read the store on every
 * call. A key is trusted only while the store's change feed says nothing can have changed it unheard
 * (see `TrustedCopies`); a change to its tenant (every revocation is one) evicts it, on every instance
 * that hears it. Unknown key ids are never kept, so a made-up id is read from the store every time.
 */
export class PluginKeyCache {
  readonly #store: Store;
  readonly #keys: TrustedCopies<PluginKeyLookup>;

  constructor(store: Store) {
    this.#store = store;
    this.#keys = new TrustedCopies(store, CACHE_LIMIT);
    store.changes.subscribe((change) => {
      if (change.kind === "tenant") this.#keys.evict((key) => key.tenantId === change.tenantId);
      else if (change.kind === "resync") this.#keys.clear();
    });
  }

  /** The key with this id as last read, while it can be trusted; undefined when the store must be asked. */
  trusted(keyId: string): PluginKeyLookup | undefined {
    return this.#keys.trusted(keyId);
  }

  /**
   * The key with this id as last read, whatever the epoch: for a caller whose commit checks the tenant's
   * config version the key was read at (a revocation since moved it), so it needs no hearing at all.
   */
  kept(keyId: string): PluginKeyLookup | undefined {
    return this.#keys.kept(keyId);
  }

  /** Reads the key from the store, and keeps it when it exists and nothing changed meanwhile. */
  read(keyId: string): Promise<PluginKeyLookup | undefined> {
    return this.#keys.read(keyId, () => this.#store.findPluginKey(keyId));
  }
}
