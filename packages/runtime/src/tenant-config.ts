import type { TenantPolicy } from "./api.js";
import { PermissionPolicy, normalizePolicy } from "./permission-policy.js";
import type { Store, TenantConfigRecord } from "./store/store.js";

/** One tenant's installs and compiled policy, as of `version`. */
export interface TenantState {
  readonly tenantId: string;
  readonly version: number;
  readonly installs: ReadonlyMap<string, { readonly enabled: boolean }>;
  readonly policy: PermissionPolicy;
}

interface CacheEntry {
  readonly state: TenantState;
  /** When the store last confirmed this version (clock ms). */
  checkedAt: number;
}

const CACHE_LIMIT = 10_000;

/**
 * Tenant configuration, compiled once per change. Changes made through this runtime apply at once
 * (`invalidate`); a change made by another instance is seen within `refreshMs` by previews and
 * refusals, and always before an effect: the step-9 transaction checks the version steps 2-6 used.
 */
export class TenantConfigCache {
  readonly #store: Store;
  readonly #refreshMs: number;
  readonly #clock: () => number;
  readonly #onBadPolicy: (tenantId: string) => void;
  readonly #entries = new Map<string, CacheEntry>();

  constructor(options: { store: Store; refreshMs: number; clock: () => number; onBadPolicy: (tenantId: string) => void }) {
    this.#store = options.store;
    this.#refreshMs = options.refreshMs;
    this.#clock = options.clock;
    this.#onBadPolicy = options.onBadPolicy;
  }

  /** The tenant's state; reads the store only when the cached one is older than the refresh window. */
  get(tenantId: string): TenantState | Promise<TenantState> {
    const entry = this.#entries.get(tenantId);
    if (entry !== undefined && this.#clock() - entry.checkedAt < this.#refreshMs) return entry.state;
    return this.#load(tenantId, entry);
  }

  /** Forgets a tenant's state: the next call reads it again. */
  invalidate(tenantId: string): void {
    this.#entries.delete(tenantId);
  }

  async #load(tenantId: string, entry: CacheEntry | undefined): Promise<TenantState> {
    const checkedAt = this.#clock();
    const fresh = await this.#store.loadTenantConfig(tenantId, entry?.state.version);
    if (fresh === undefined && entry !== undefined) {
      entry.checkedAt = checkedAt;
      return entry.state;
    }
    const state = this.#compile(fresh!);
    if (this.#entries.size >= CACHE_LIMIT && !this.#entries.has(tenantId)) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(tenantId, { state, checkedAt });
    return state;
  }

  #compile(record: TenantConfigRecord): TenantState {
    const installs = new Map(record.plugins.map((plugin) => [plugin.pluginId, { enabled: plugin.enabled }] as const));
    let policy = new PermissionPolicy();
    if (record.policy !== undefined) {
      try {
        policy = new PermissionPolicy(normalizePolicy(JSON.parse(record.policy) as TenantPolicy));
      } catch {
        // A stored policy that no longer parses denies everything (fail closed) until an admin sets a new one.
        this.#onBadPolicy(record.tenantId);
      }
    }
    return { tenantId: record.tenantId, version: record.version, installs, policy };
  }
}
