/** The rows of user grants (migration 9), as both stores read and write them. Times are Unix milliseconds. */

/** A user's standing approval: the same caller, tool and version, at most `maxCalls` calls, until `expiresAt`. */
export interface GrantRecord {
  readonly tenantId: string;
  readonly grantId: string;
  /** The user the calls act for (the actor), who approved the grant on the confirmation page. */
  readonly actorUserId: string;
  readonly callerPluginId: string;
  /** `<providerPluginId>:<tool>`, without the version. */
  readonly tool: string;
  readonly version: number;
  readonly schemaHash: string;
  /** The argument limits as JSON (`GrantConstraints`), or undefined for every input. */
  readonly constraintsJson?: string;
  readonly maxCalls?: number;
  readonly uses: number;
  readonly expiresAt: number;
  /** Who approved it: the signed-in user on the page. */
  readonly createdBy: string;
  readonly createdAt: number;
  readonly revokedAt?: number;
}

/**
 * One use of a grant, counted only while it is live for exactly this call's binding: not revoked, not
 * expired at `now`, the same actor, caller, tool, version and schema hash, and `uses < max_calls`.
 */
export interface GrantUse extends Pick<GrantRecord, "tenantId" | "grantId" | "actorUserId" | "callerPluginId" | "tool" | "version" | "schemaHash"> {
  readonly now: number;
}
