/**
 * `runtime.grants`: what a signed-in user sees and revokes of their own grants (the confirmation page), and
 * the cheap read the MCP bridge makes before trying a confirmed call without a token. Grants are created
 * only by the user approving a request on the confirmation page (`decideConfirmation`), never by a caller.
 */
import type { ToolRef } from "@toolpact/contract";
import type { ConfirmationPerson, Principal } from "../api.js";
import type { GrantRecord, Store } from "../store/store.js";
import { GRANT_LOOKUP_LIMIT, type GrantFinder, hasCallsLeft, standsAt } from "./find-grant.js";
import { describeGrantConstraints, type GrantConstraints } from "./grant-constraints.js";

/** One grant as its user sees it; times in Unix milliseconds. */
export interface GrantView {
  readonly grantId: string;
  readonly callerPluginId: string;
  /** `<providerPluginId>:<tool>`. */
  readonly tool: string;
  readonly version: number;
  /** The argument limits in plain words ("only project `ops`"); empty for every input. */
  readonly limits: readonly string[];
  readonly maxCalls?: number;
  readonly uses: number;
  readonly expiresAt: number;
  readonly createdAt: number;
  readonly revokedAt?: number;
  /** Not revoked, not expired, calls left. */
  readonly live: boolean;
}

/** The user's grants, through the runtime. */
export interface RuntimeGrants {
  /** True when a live grant of the principal's user names this caller, tool and version (its input is not checked here). */
  mayCover(principal: Principal, ref: ToolRef): Promise<boolean>;
  /** The signed-in user's grants, newest first (at most 100). */
  list(person: ConfirmationPerson): Promise<readonly GrantView[]>;
  /** Revokes one of the signed-in user's grants at once, on every instance; false when none was live by that id. */
  revoke(person: ConfirmationPerson, grantId: string): Promise<boolean>;
}

/** `runtime.grants` over the store; `mayCover` through the grants the calls keep (`finder`). */
export function createRuntimeGrants(store: Store, clock: () => number, finder: GrantFinder): RuntimeGrants {
  return {
    mayCover: (principal, ref) =>
      finder.mayCover(
        {
          tenantId: principal.tenantId,
          actorUserId: principal.actor.userId,
          callerPluginId: principal.callerPluginId,
          tool: `${ref.providerId}:${ref.tool}`,
          ...(ref.version === undefined ? {} : { version: ref.version }),
        },
        clock(),
      ),
    async list(person) {
      const now = clock();
      return (await store.listGrants(person.tenantId, person.userId, GRANT_LOOKUP_LIMIT)).map((grant) => grantView(grant, now));
    },
    revoke: (person, grantId) => store.revokeGrant(person.tenantId, person.userId, grantId, clock()),
  };
}

function isLive(grant: GrantRecord, now: number): boolean {
  return standsAt(grant, now) && hasCallsLeft(grant);
}

function grantView(grant: GrantRecord, now: number): GrantView {
  const constraints = grant.constraintsJson === undefined ? undefined : (JSON.parse(grant.constraintsJson) as GrantConstraints);
  return {
    grantId: grant.grantId,
    callerPluginId: grant.callerPluginId,
    tool: grant.tool,
    version: grant.version,
    limits: describeGrantConstraints(constraints),
    ...(grant.maxCalls === undefined ? {} : { maxCalls: grant.maxCalls }),
    uses: grant.uses,
    expiresAt: grant.expiresAt,
    createdAt: grant.createdAt,
    ...(grant.revokedAt === undefined ? {} : { revokedAt: grant.revokedAt }),
    live: isLive(grant, now),
  };
}
