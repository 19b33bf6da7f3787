import type { GrantRecord, GrantUse } from "../grant-records.js";
import { GRANT_COLUMNS, grantFromRow, grantUseCondition, grantUseValues, grantValues } from "../grant-rows.js";
import type { PostgresConnection } from "./connection.js";
import { statement } from "./statements.js";

const INSERT_GRANT = statement(
  "insert_grant",
  `INSERT INTO grants (${GRANT_COLUMNS}) VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::int4, $7::text, $8::text, $9::int4, $10::int4, $11::int8, $12::text, $13::int8, $14::int8)`,
);
const LIST_GRANTS = statement(
  "list_grants",
  "SELECT * FROM grants WHERE tenant_id = $1::text AND actor_user_id = $2::text ORDER BY created_at DESC, grant_id DESC LIMIT $3::int4",
);
const REVOKE_GRANT = statement(
  "revoke_grant",
  "UPDATE grants SET revoked_at = $1::int8 WHERE tenant_id = $2::text AND actor_user_id = $3::text AND grant_id = $4::text AND revoked_at IS NULL RETURNING 1",
);
/** One statement, its own transaction: the row lock makes concurrent uses wait and re-check `uses < max_calls`. */
const USE_GRANT = statement(
  "use_grant",
  `UPDATE grants SET uses = uses + 1 WHERE ${grantUseCondition((n) => `$${n}::${n === 6 ? "int4" : n === 8 ? "int8" : "text"}`)} RETURNING 1`,
);

/** Records a new grant (migration 9). */
export async function insertGrant(db: PostgresConnection, grant: GrantRecord): Promise<void> {
  await db.rows("could not record a grant", INSERT_GRANT, grantValues(grant));
}

/** The actor's grants, newest first. */
export async function listGrants(db: PostgresConnection, tenantId: string, actorUserId: string, limit: number): Promise<GrantRecord[]> {
  return (await db.rows("could not list grants", LIST_GRANTS, [tenantId, actorUserId, limit])).map(grantFromRow);
}

/** Revokes one live grant of the actor; false when there is none. */
export async function revokeGrant(db: PostgresConnection, tenantId: string, actorUserId: string, grantId: string, now: number): Promise<boolean> {
  return (await db.rows("could not revoke a grant", REVOKE_GRANT, [now, tenantId, actorUserId, grantId])).length === 1;
}

/** Counts one use of a live grant; false when it is not live for this binding or its calls are used up. */
export async function useGrant(db: PostgresConnection, use: GrantUse): Promise<boolean> {
  return (await db.rows("could not use a grant", USE_GRANT, grantUseValues(use))).length === 1;
}
