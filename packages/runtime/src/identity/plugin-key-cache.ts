import type { PluginKeyLookup, Store } from "../store/store.js";

/** Keys kept at most; the oldest goes first. */
const CACHE_LIMIT = 10_000;

interface Entry {
  readonly key: PluginKeyLookup;
  /** The store's change epoch when the key was read: the entry is trusted only while it stays the same. */
  readonly epoch: number;
}

/**
 * Plugin keys as last read from the store, so that authentication need not read the store on every
 * call. An entry is trusted only while the store's change feed says nothing can have changed it unheard
 * (same epoch); a change to its tenant (every revocation is one) evicts it, on every instance that hears
 * it; while other instances cannot be heard (PostgreSQL's LISTEN connection is down) nothing is trusted.
 * Unknown key ids are never kept, so a made-up id is read from the store every time.
 */
export class PluginKeyCache {
  readonly #store: Store;
  readonly #entries = new Map<string, Entry>();
  /** Moves with every eviction: a read that overlapped one keeps nothing. */
  #evictions = 0;

  constructor(store: Store) {
    this.#store = store;
    store.changes.subscribe((change) => {
      if (change.kind === "tenant") this.#evictTenant(change.tenantId);
      else if (change.kind === "resync") this.#clear();
    });
  }

  /** The key with this id as last read, while it can be trusted; undefined when the store must be asked. */
  trusted(keyId: string): PluginKeyLookup | undefined {
    const entry = this.#entries.get(keyId);
    if (entry === undefined) return undefined;
    if (entry.epoch !== this.#store.changes.epoch()) {
      this.#entries.delete(keyId);
      return undefined;
    }
    return entry.key;
  }

  /**
   * The key with this id as last read, whatever the epoch: for a caller whose commit checks the tenant's
   * config version the key was read at (a revocation since moved it), so it needs no hearing at all.
   */
  kept(keyId: string): PluginKeyLookup | undefined {
    return this.#entries.get(keyId)?.key;
  }

  /** Reads the key from the store, and keeps it when it exists and nothing changed meanwhile. */
  async read(keyId: string): Promise<PluginKeyLookup | undefined> {
    const epoch = this.#store.changes.epoch();
    const evictions = this.#evictions;
    const key = await this.#store.findPluginKey(keyId);
    if (key !== undefined && epoch !== undefined && evictions === this.#evictions && epoch === this.#store.changes.epoch()) {
      if (this.#entries.size >= CACHE_LIMIT && !this.#entries.has(keyId)) {
        const oldest = this.#entries.keys().next();
        if (!oldest.done) this.#entries.delete(oldest.value);
      }
      this.#entries.set(keyId, { key, epoch });
    }
    return key;
  }

  #evictTenant(tenantId: string): void {
    this.#evictions += 1;
    for (const [keyId, entry] of this.#entries) if (entry.key.tenantId === tenantId) this.#entries.delete(keyId);
  }

  #clear(): void {
    this.#evictions += 1;
    this.#entries.clear();
  }
}
