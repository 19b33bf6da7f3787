import type { GrantInBegin, GrantRecord, Store } from "../store/store.js";
import { TrustedCopies } from "../store/trusted-copies.js";
import { type GrantConstraints, matchesGrantConstraints } from "./grant-constraints.js";

/** How many of the actor's newest grants a call looks through for one that covers it. */
export const GRANT_LOOKUP_LIMIT = 100;
/** Users whose grants are kept in memory at most; the oldest goes first. */
const KEPT_USERS = 10_000;

/** What a grant must match: the call's tenant, actor, caller, tool, version and schema hash. */
export interface GrantBinding {
  readonly tenantId: string;
  readonly actorUserId: string;
  readonly callerPluginId: string;
  /** `<providerPluginId>:<tool>`, without the version. */
  readonly tool: string;
  readonly version: number;
  readonly schemaHash: string;
}

/**
 * Finds the grant that covers a call: the newest live one with the same binding, not revoked, unexpired,
 * calls left, and the input within its argument limits; undefined when none does (the call asks as
 * before). Whether the use still counts is the begin transaction's to decide: a grant revoked or used up
 * meanwhile ends there.
 *
 * Each user's grants are kept as last read while the store's change feed vouches for them (a grant made
 * or revoked is a change, on every instance that hears it; see `TrustedCopies`), so a call under a grant,
 * or a confirmed call by a user with none, reads nothing. A grant with a call limit is the exception: how
 * many calls it has left is read from the store each time, as a use is no change.
 */
export class GrantFinder {
  readonly #store: Store;
  readonly #users: TrustedCopies<readonly GrantRecord[]>;

  constructor(store: Store) {
    this.#store = store;
    this.#users = new TrustedCopies(store, KEPT_USERS);
    store.changes.subscribe((change) => {
      if (change.kind === "grants") this.#users.evictKey(userKey(change.tenantId, change.actorUserId));
      else if (change.kind === "resync") this.#users.clear();
    });
  }

  async find(binding: GrantBinding, input: unknown, now: number): Promise<GrantInBegin | undefined> {
    const key = userKey(binding.tenantId, binding.actorUserId);
    const kept = this.#users.trusted(key);
    if (kept !== undefined) {
      const candidate = kept.find((grant) => covers(grant, binding, input, now));
      if (candidate === undefined) return undefined;
      if (candidate.maxCalls === undefined) return inBegin(candidate);
    }
    const found = (await this.#read(key, binding)).find((grant) => covers(grant, binding, input, now) && hasCallsLeft(grant));
    return found === undefined ? undefined : inBegin(found);
  }

  /**
   * Whether a live grant of this caller and tool (and version, when given) may cover a call whose input is
   * not known yet: the MCP bridge's question before it tries a confirmed call without a token. From the
   * kept grants where they settle it; where only grants with a call limit match, from the store.
   */
  async mayCover(binding: Omit<GrantBinding, "version" | "schemaHash"> & { readonly version?: number }, now: number): Promise<boolean> {
    const names = (grant: GrantRecord) =>
      standsAt(grant, now) &&
      grant.callerPluginId === binding.callerPluginId &&
      grant.tool === binding.tool &&
      (binding.version === undefined || grant.version === binding.version);
    const key = userKey(binding.tenantId, binding.actorUserId);
    const kept = this.#users.trusted(key)?.filter(names);
    if (kept !== undefined && (kept.length === 0 || kept.some((grant) => grant.maxCalls === undefined))) return kept.length > 0;
    return (await this.#read(key, binding)).some((grant) => names(grant) && hasCallsLeft(grant));
  }

  /** The user's grants from the store, kept when nothing changed meanwhile. */
  async #read(key: string, user: { readonly tenantId: string; readonly actorUserId: string }): Promise<readonly GrantRecord[]> {
    return (await this.#users.read(key, () => this.#store.listGrants(user.tenantId, user.actorUserId, GRANT_LOOKUP_LIMIT))) ?? [];
  }
}

const userKey = (tenantId: string, actorUserId: string) => `${tenantId}\n${actorUserId}`;

const inBegin = (grant: GrantRecord): GrantInBegin => ({ grantId: grant.grantId, tool: grant.tool, version: grant.version, schemaHash: grant.schemaHash });

/** Not revoked and not expired at `now`. */
export const standsAt = (grant: GrantRecord, now: number): boolean => grant.revokedAt === undefined && grant.expiresAt > now;

/** No call limit, or calls left under it. */
export const hasCallsLeft = (grant: GrantRecord): boolean => grant.maxCalls === undefined || grant.uses < grant.maxCalls;

/** Everything but the calls left: those alone change without a change being announced. */
function covers(grant: GrantRecord, binding: GrantBinding, input: unknown, now: number): boolean {
  if (!standsAt(grant, now)) return false;
  if (grant.callerPluginId !== binding.callerPluginId || grant.tool !== binding.tool) return false;
  if (grant.version !== binding.version || grant.schemaHash !== binding.schemaHash) return false;
  return matchesGrantConstraints(constraintsOf(grant), input);
}

/** Each kept grant's argument limits, parsed once rather than on every call it is checked against. */
const parsedConstraints = new WeakMap<GrantRecord, GrantConstraints>();

function constraintsOf(grant: GrantRecord): GrantConstraints | undefined {
  if (grant.constraintsJson === undefined) return undefined;
  let parsed = parsedConstraints.get(grant);
  if (parsed === undefined) {
    parsed = JSON.parse(grant.constraintsJson) as GrantConstraints;
    parsedConstraints.set(grant, parsed);
  }
  return parsed;
}
