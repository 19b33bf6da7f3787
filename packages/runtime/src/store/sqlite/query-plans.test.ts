/**
 * The statements that read the activity log find their rows through an index in id order, never a scan
 * of the tenant's activity and a sort: each index is a page written in every call's commit, so the
 * schema keeps only those they use. (Without statistics SQLite's planner would walk a tenant's whole
 * log by primary key to find one actor's rows; the statements name their index.)
 */
import type Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openSqlite } from "./open-database.js";
import { resolveSqliteSettings } from "./settings.js";
import { prepareStatements, type SqliteStatements } from "./statements.js";

const opened: Database.Database[] = [];
afterEach(() => {
  for (const db of opened.splice(0)) db.close();
});

function open(): { db: Database.Database; statements: SqliteStatements } {
  const db = openSqlite(resolveSqliteSettings({ path: ":memory:" }));
  opened.push(db);
  return { db, statements: prepareStatements(db) };
}

/** SQLite's plan for a prepared statement, one line per step. */
function planOf(db: Database.Database, statement: Database.Statement): string[] {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${statement.source}`).all(...new Array<null>(statement.source.split("?").length - 1).fill(null));
  return (rows as { detail: string }[]).map((row) => row.detail);
}

describe("activity reads on SQLite", () => {
  it("an actor's activity with one caller reads activity_by_caller, in id order without a sort", () => {
    const { db, statements } = open();
    for (const name of ["listCallerActivity", "listCallerActivityBefore"] as const) {
      const plan = planOf(db, statements[name]);
      expect(plan.join("; "), name).toMatch(/USING (COVERING )?INDEX activity_by_caller/);
      expect(plan.join("; "), name).not.toMatch(/USE TEMP B-TREE|^SCAN activity$/);
    }
  });

  it("the tenant's activity reads the primary key in id order", () => {
    const { db, statements } = open();
    for (const name of ["listActivity", "listActivityBefore"] as const) {
      const plan = planOf(db, statements[name]);
      expect(plan.join("; "), name).toMatch(/USING PRIMARY KEY/);
      expect(plan.join("; "), name).not.toMatch(/USE TEMP B-TREE/);
    }
  });

  it("keeps no index no statement needs: besides its primary key (the table itself), activity has activity_by_caller", () => {
    const { db } = open();
    const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'activity' ORDER BY name").pluck().all();
    expect(indexes).toEqual(["activity_by_caller"]);
  });
});
