import type { Store } from "./store.js";

interface Entry<V> {
  readonly value: V;
  /** The store's change epoch when the value was read: the copy is trusted only while it stays the same. */
  readonly epoch: number;
}

/**
 * Copies of what was read from the store, so that a call need not read it again. A copy is trusted only
 * while the store's change feed says nothing can have changed it unheard (the same epoch); the owner
 * evicts what a change it hears touches, on every instance that hears it; while other instances cannot be
 * heard (PostgreSQL's LISTEN connection is down) nothing is trusted. At most `limit` copies: the oldest goes first.
 */
export class TrustedCopies<V> {
  readonly #store: Store;
  readonly #limit: number;
  readonly #entries = new Map<string, Entry<V>>();
  /** Moves with every eviction: a read that overlapped one keeps nothing. */
  #evictions = 0;

  constructor(store: Store, limit: number) {
    this.#store = store;
    this.#limit = limit;
  }

  /** The copy kept under `key`, while it can be trusted; undefined when the store must be asked. */
  trusted(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.epoch !== this.#store.changes.epoch()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** The copy kept under `key`, whatever the epoch (for a caller whose commit checks it anyway). */
  kept(key: string): V | undefined {
    return this.#entries.get(key)?.value;
  }

  /** Reads with `load`, and keeps what it answers (unless undefined) when nothing changed meanwhile. */
  async read(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const epoch = this.#store.changes.epoch();
    const evictions = this.#evictions;
    const value = await load();
    if (value !== undefined && epoch !== undefined && evictions === this.#evictions && epoch === this.#store.changes.epoch()) {
      if (this.#entries.size >= this.#limit && !this.#entries.has(key)) {
        const oldest = this.#entries.keys().next();
        if (!oldest.done) this.#entries.delete(oldest.value);
      }
      this.#entries.set(key, { value, epoch });
    }
    return value;
  }

  /** Forgets every copy `touched` answers true for. */
  evict(touched: (value: V, key: string) => boolean): void {
    this.#evictions += 1;
    for (const [key, entry] of this.#entries) if (touched(entry.value, key)) this.#entries.delete(key);
  }

  /** Forgets the copy under `key`. */
  evictKey(key: string): void {
    this.#evictions += 1;
    this.#entries.delete(key);
  }

  /** Forgets every copy. */
  clear(): void {
    this.#evictions += 1;
    this.#entries.clear();
  }
}
