import type { GrantRecord, GrantUse } from "./grant-records.js";
import type { Row } from "./rows.js";

/** The columns of `grants` in insert order. */
export const GRANT_COLUMNS =
  "tenant_id, grant_id, actor_user_id, caller_plugin_id, tool, version, schema_hash, constraints, max_calls, uses, expires_at, created_by, created_at, revoked_at";

/** A grant's values in `GRANT_COLUMNS` order. */
export function grantValues(grant: GrantRecord): unknown[] {
  return [
    grant.tenantId,
    grant.grantId,
    grant.actorUserId,
    grant.callerPluginId,
    grant.tool,
    grant.version,
    grant.schemaHash,
    grant.constraintsJson ?? null,
    grant.maxCalls ?? null,
    grant.uses,
    grant.expiresAt,
    grant.createdBy,
    grant.createdAt,
    grant.revokedAt ?? null,
  ];
}

/** A use's values in the order of the conditional update's parameters. */
export function grantUseValues(use: GrantUse): unknown[] {
  return [use.tenantId, use.grantId, use.actorUserId, use.callerPluginId, use.tool, use.version, use.schemaHash, use.now];
}

/** The live-grant condition both stores' conditional update uses: parameters 1..8, each once and in order, formatted by `p`. */
export function grantUseCondition(p: (n: number) => string): string {
  return (
    `tenant_id = ${p(1)} AND grant_id = ${p(2)} AND actor_user_id = ${p(3)} AND caller_plugin_id = ${p(4)} AND tool = ${p(5)}` +
    ` AND version = ${p(6)} AND schema_hash = ${p(7)} AND revoked_at IS NULL AND expires_at > ${p(8)}` +
    " AND (max_calls IS NULL OR uses < max_calls)"
  );
}

/** A `grants` row as a record. */
export function grantFromRow(row: Row): GrantRecord {
  const optional = (value: unknown) => (value === null || value === undefined ? undefined : value);
  const constraintsJson = optional(row.constraints) as string | undefined;
  const maxCalls = optional(row.max_calls);
  const revokedAt = optional(row.revoked_at);
  return {
    tenantId: String(row.tenant_id),
    grantId: String(row.grant_id),
    actorUserId: String(row.actor_user_id),
    callerPluginId: String(row.caller_plugin_id),
    tool: String(row.tool),
    version: Number(row.version),
    schemaHash: String(row.schema_hash),
    ...(constraintsJson === undefined ? {} : { constraintsJson }),
    ...(maxCalls === undefined ? {} : { maxCalls: Number(maxCalls) }),
    uses: Number(row.uses),
    expiresAt: Number(row.expires_at),
    createdBy: String(row.created_by),
    createdAt: Number(row.created_at),
    ...(revokedAt === undefined ? {} : { revokedAt: Number(revokedAt) }),
  };
}
