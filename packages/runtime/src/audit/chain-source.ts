/** Where a verification reads a chain from: the store, page by page, or an export file, parsed. */
import type { ActivityChainStore, ActivityCheckpointRecord, ChainHead, ChainedActivityRecord } from "../store/store.js";

/** Tenants, their checkpoints in seq order, and their events in id order. */
export interface ChainSource {
  tenants(): Promise<readonly string[]>;
  checkpoints(tenantId: string): Promise<readonly ActivityCheckpointRecord[]>;
  events(tenantId: string): AsyncIterable<ChainedActivityRecord>;
  /** Where the chain got to when its latest checkpoint was made (a store knows; an export has none). */
  head?(tenantId: string): Promise<ChainHead | undefined>;
}

/** Events read per page. */
const PAGE = 1000;

/** A store's chain, read in pages of `PAGE` events; `tenantId` limits it to one tenant. */
export function storeChainSource(chain: ActivityChainStore, tenantId?: string): ChainSource {
  return {
    tenants: async () => (tenantId === undefined ? chain.listTenants() : [tenantId]),
    checkpoints: (tenant) => chain.listCheckpoints(tenant),
    events: (tenant) => storeEvents(chain, tenant),
    head: (tenant) => chain.chainHead(tenant),
  };
}

async function* storeEvents(chain: ActivityChainStore, tenantId: string): AsyncGenerator<ChainedActivityRecord> {
  let afterId: string | undefined;
  for (;;) {
    const page = await chain.readChain(tenantId, afterId === undefined ? { limit: PAGE } : { afterId, limit: PAGE });
    yield* page;
    if (page.length < PAGE) return;
    afterId = page[page.length - 1]!.id;
  }
}

/** Events and checkpoints already in memory (an export), sorted here. */
export function listedChainSource(events: readonly ChainedActivityRecord[], checkpoints: readonly ActivityCheckpointRecord[]): ChainSource {
  const byTenant = <T extends { readonly tenantId: string }>(items: readonly T[]) => {
    const map = new Map<string, T[]>();
    for (const item of items) {
      const list = map.get(item.tenantId);
      if (list === undefined) map.set(item.tenantId, [item]);
      else list.push(item);
    }
    return map;
  };
  const events_ = byTenant(events);
  const checkpoints_ = byTenant(checkpoints);
  for (const list of events_.values()) list.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const list of checkpoints_.values()) list.sort((a, b) => a.seq - b.seq);
  return {
    tenants: async () => [...new Set([...events_.keys(), ...checkpoints_.keys()])].sort(),
    checkpoints: async (tenant) => checkpoints_.get(tenant) ?? [],
    events: async function* (tenant) {
      yield* events_.get(tenant) ?? [];
    },
  };
}
