import type Database from "better-sqlite3";
import { CONSUMED_TOKEN_GRACE_MS, type PresenceTokenUse } from "../store.js";

/** The used presence token ids of one SQLite database (migration 5): a presence token signs in once. */
export class SqlitePresenceTokens {
  readonly #forget: Database.Statement;
  readonly #insert: Database.Statement;

  constructor(db: Database.Database) {
    this.#forget = db.prepare("DELETE FROM used_presence_tokens WHERE expires_at < ?");
    this.#insert = db.prepare(
      "INSERT INTO used_presence_tokens (tenant_id, token_id, user_id, used_at, expires_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
    );
  }

  /** True when the id was not recorded before (call inside the store's write queue). */
  use(use: PresenceTokenUse): boolean {
    this.#forget.run(use.usedAt - CONSUMED_TOKEN_GRACE_MS);
    return this.#insert.run(use.tenantId, use.tokenId, use.userId, use.usedAt, use.expiresAt).changes === 1;
  }
}
