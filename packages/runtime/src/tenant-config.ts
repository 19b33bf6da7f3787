import type { RecoveryPolicy, TenantPolicy } from "./api.js";
import { PermissionPolicy, normalizePolicy } from "./permission-policy.js";
import { RecoveryRules } from "./recovery-policy.js";
import type { PluginRegistry, RegisteredTool } from "./registry.js";
import { NO_SEAMS, seamApplies, type RegisteredSeam, type ResolvedSeams } from "./seams.js";
import type { Store, TenantConfigRecord } from "./store/store.js";

/** The names one plugin activated for a tenant, per kind. */
export interface PluginActivation {
  readonly gates: ReadonlySet<string>;
  readonly hooks: ReadonlySet<string>;
  readonly guards: ReadonlySet<string>;
}

/** One tenant's installs, compiled policy, activations and recovery rules, as of `version`. */
export interface TenantState {
  readonly tenantId: string;
  readonly version: number;
  readonly installs: ReadonlyMap<string, { readonly enabled: boolean }>;
  readonly policy: PermissionPolicy;
  readonly activations: ReadonlyMap<string, PluginActivation>;
  readonly recovery: RecoveryRules;
  /** The seams acting on each tool, resolved on first use (per registry generation). */
  readonly seams: Map<RegisteredTool, ResolvedSeams>;
  seamGeneration: number;
}

/**
 * The gates, hooks and guards that act on `tool` for this tenant: activated, of an installed and enabled
 * plugin, within their `appliesTo` as the policy narrows it; in plugin registration order, then manifest
 * order. Resolved once per tool and tenant config.
 */
export function resolveSeams(tenant: TenantState, registry: PluginRegistry, tool: RegisteredTool): ResolvedSeams {
  if (tenant.activations.size === 0) return NO_SEAMS;
  if (tenant.seamGeneration !== registry.generation) {
    tenant.seams.clear();
    tenant.seamGeneration = registry.generation;
  }
  const known = tenant.seams.get(tool);
  if (known !== undefined) return known;
  const gates: ResolvedSeams["gates"][number][] = [];
  const hooks: ResolvedSeams["hooks"][number][] = [];
  const guards: ResolvedSeams["guards"][number][] = [];
  const { providerId, declaration } = tool;
  const named = { providerId, name: declaration.name, version: declaration.version };
  const applies = (seam: RegisteredSeam<unknown>) => seamApplies(seam, tenant.policy.narrowing(seam.key), named);
  for (const plugin of registry.all()) {
    const activation = tenant.activations.get(plugin.id);
    if (activation === undefined || tenant.installs.get(plugin.id)?.enabled !== true) continue;
    for (const seam of plugin.gates.values()) if (activation.gates.has(seam.name) && applies(seam)) gates.push(seam);
    for (const seam of plugin.hooks.values()) if (activation.hooks.has(seam.name) && applies(seam)) hooks.push(seam);
    for (const seam of plugin.guards.values()) if (activation.guards.has(seam.name) && applies(seam)) guards.push(seam);
  }
  const resolved = gates.length + hooks.length + guards.length === 0 ? NO_SEAMS : Object.freeze({ gates, hooks, guards });
  tenant.seams.set(tool, resolved);
  return resolved;
}

interface CacheEntry {
  readonly state: TenantState;
  /** When the store last confirmed this version (clock ms). */
  checkedAt: number;
}

const CACHE_LIMIT = 10_000;

/**
 * Tenant configuration, compiled once per change. Changes the store announces apply at once
 * (`invalidate`: this runtime's own, and other instances' where the store hears them); any other change
 * is seen within `refreshMs` by previews and refusals, and always before an effect or a read's result:
 * the begin transaction (or a read's single one) checks the version the authorization steps used.
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

  /** Forgets every tenant's state (changes may have gone unheard). */
  invalidateAll(): void {
    this.#entries.clear();
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
    let recovery = new RecoveryRules();
    if (record.recoveryPolicy !== undefined) {
      try {
        const parsed = JSON.parse(record.recoveryPolicy) as RecoveryPolicy;
        if (!Array.isArray(parsed.rules)) throw new TypeError("no rules");
        recovery = new RecoveryRules(parsed);
      } catch {
        // Unreadable: nothing is re-invoked (expired operations become unknown) until a new one is pinned.
        this.#onBadPolicy(record.tenantId);
      }
    }
    const activations = new Map(
      (record.activations ?? []).map(
        (activation) =>
          [activation.pluginId, { gates: new Set(activation.gates), hooks: new Set(activation.hooks), guards: new Set(activation.guards) }] as const,
      ),
    );
    return {
      tenantId: record.tenantId,
      version: record.version,
      installs,
      policy,
      activations,
      recovery,
      seams: new Map(),
      seamGeneration: -1,
    };
  }
}
