import type Database from "better-sqlite3";
import type { GrantRecord, GrantUse } from "../grant-records.js";
import { GRANT_COLUMNS, grantFromRow, grantUseCondition, grantUseValues, grantValues } from "../grant-rows.js";
import type { Row } from "../rows.js";

/** The user grants of one SQLite database (migration 9); call each inside the store's write queue. */
export class SqliteGrants {
  readonly #insert: Database.Statement;
  readonly #list: Database.Statement;
  readonly #revoke: Database.Statement;
  readonly #use: Database.Statement;

  constructor(db: Database.Database) {
    this.#insert = db.prepare(
      `INSERT INTO grants (${GRANT_COLUMNS}) VALUES (${GRANT_COLUMNS.split(",")
        .map(() => "?")
        .join(", ")})`,
    );
    this.#list = db.prepare("SELECT * FROM grants WHERE tenant_id = ? AND actor_user_id = ? ORDER BY created_at DESC, grant_id DESC LIMIT ?");
    this.#revoke = db.prepare("UPDATE grants SET revoked_at = ? WHERE tenant_id = ? AND actor_user_id = ? AND grant_id = ? AND revoked_at IS NULL");
    this.#use = db.prepare(`UPDATE grants SET uses = uses + 1 WHERE ${grantUseCondition(() => "?")}`);
  }

  insert(grant: GrantRecord): void {
    this.#insert.run(...grantValues(grant));
  }

  list(tenantId: string, actorUserId: string, limit: number): GrantRecord[] {
    return (this.#list.all(tenantId, actorUserId, limit) as Row[]).map(grantFromRow);
  }

  revoke(tenantId: string, actorUserId: string, grantId: string, now: number): boolean {
    return this.#revoke.run(now, tenantId, actorUserId, grantId).changes === 1;
  }

  use(use: GrantUse): boolean {
    return this.#use.run(...grantUseValues(use)).changes === 1;
  }
}
