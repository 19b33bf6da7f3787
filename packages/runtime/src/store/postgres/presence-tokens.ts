import { CONSUMED_TOKEN_GRACE_MS, type PresenceTokenUse } from "../store.js";
import type { PostgresConnection } from "./connection.js";
import { statement } from "./statements.js";

/** Forgets long-expired ids and records this one, in one statement; answers 1 when it was new. */
const USE_PRESENCE_TOKEN = statement(
  "use_presence_token",
  `WITH forgotten AS (DELETE FROM used_presence_tokens WHERE expires_at < $6::int8),
        used AS (
          INSERT INTO used_presence_tokens (tenant_id, token_id, user_id, used_at, expires_at)
          VALUES ($1::text, $2::text, $3::text, $4::int8, $5::int8)
          ON CONFLICT (tenant_id, token_id) DO NOTHING
          RETURNING 1
        )
   SELECT count(*)::int AS used FROM used`,
);

/** Records a presence token's id as used (migration 5): true the first time, on any instance sharing the database. */
export async function usePresenceToken(db: PostgresConnection, use: PresenceTokenUse): Promise<boolean> {
  const [row] = await db.rows("could not record a presence token's use", USE_PRESENCE_TOKEN, [
    use.tenantId,
    use.tokenId,
    use.userId,
    use.usedAt,
    use.expiresAt,
    use.usedAt - CONSUMED_TOKEN_GRACE_MS,
  ]);
  return row?.used === 1;
}
