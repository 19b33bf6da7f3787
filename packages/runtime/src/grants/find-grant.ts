import type { GrantInBegin, GrantRecord, Store } from "../store/store.js";
import { type GrantConstraints, matchesGrantConstraints } from "./grant-constraints.js";

/** How many of the actor's newest grants a call looks through for one that covers it. */
export const GRANT_LOOKUP_LIMIT = 100;

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
 * The newest live grant that covers this call: same binding, not revoked, unexpired at `now`, calls left,
 * and the input within its argument limits. Undefined when none does (the call asks as before). Whether
 * the use still counts is the begin transaction's to decide: a grant revoked or used up meanwhile ends there.
 */
export async function findGrant(store: Store, binding: GrantBinding, input: unknown, now: number): Promise<GrantInBegin | undefined> {
  const grants = await store.listGrants(binding.tenantId, binding.actorUserId, GRANT_LOOKUP_LIMIT);
  const found = grants.find((grant) => covers(grant, binding, input, now));
  return found === undefined ? undefined : { grantId: found.grantId, tool: found.tool, version: found.version, schemaHash: found.schemaHash };
}

function covers(grant: GrantRecord, binding: GrantBinding, input: unknown, now: number): boolean {
  if (grant.revokedAt !== undefined || grant.expiresAt <= now) return false;
  if (grant.maxCalls !== undefined && grant.uses >= grant.maxCalls) return false;
  if (grant.callerPluginId !== binding.callerPluginId || grant.tool !== binding.tool) return false;
  if (grant.version !== binding.version || grant.schemaHash !== binding.schemaHash) return false;
  const constraints = grant.constraintsJson === undefined ? undefined : (JSON.parse(grant.constraintsJson) as GrantConstraints);
  return matchesGrantConstraints(constraints, input);
}
