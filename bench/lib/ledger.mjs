// Reads the ledger a benchmark wrote, straight from the database, to check that every measured call left
// exactly one succeeded operation and one execute activity row.
import Database from "better-sqlite3";
import { queryRows } from "./postgres.mjs";
import { TENANT_ID } from "./tenant.mjs";

/** The read tool every group measures, unless a group names another. */
const READ_TOOL = "bench.items:get-item@1";
const QUERIES = {
  activity: "SELECT count(*) AS n FROM activity WHERE tenant_id = $1 AND kind = 'call' AND phase = 'execute' AND outcome = 'succeeded' AND tool = $2",
  otherCalls: "SELECT count(*) AS n FROM activity WHERE tenant_id = $1 AND kind = 'call' AND tool = $2 AND NOT (phase = 'execute' AND outcome = 'succeeded')",
  operations: "SELECT count(*) AS n FROM operations WHERE tenant_id = $1 AND state = 'succeeded' AND tool = $2",
};

/** Row counts of the read tool's calls (or `tool`'s: `<provider>:<tool>@<version>`) in a SQLite file or a PostgreSQL database. */
/** @param {{ sqliteFile?: string, postgresUrl?: string, tool?: string }} where */
export async function countLedger({ sqliteFile, postgresUrl, tool = READ_TOOL }) {
  /** @type {Record<string, number>} */
  const counts = {};
  if (sqliteFile !== undefined) {
    const db = new Database(sqliteFile, { readonly: true, fileMustExist: true });
    try {
      for (const [key, text] of Object.entries(QUERIES)) {
        const statement = db.prepare(text.replace("$1", "?").replace("$2", "?"));
        counts[key] = Number(statement.get(...(text.includes("$2") ? [TENANT_ID, tool] : [TENANT_ID])).n);
      }
    } finally {
      db.close();
    }
  } else {
    for (const [key, text] of Object.entries(QUERIES)) {
      counts[key] = Number((await queryRows(postgresUrl, text, text.includes("$2") ? [TENANT_ID, tool] : [TENANT_ID]))[0].n);
    }
  }
  return counts;
}

/** Throws unless the ledger holds exactly `calls` succeeded read operations and execute activity rows, and no other rows of read calls. */
export function checkLedger(counts, calls, where) {
  const problems = [];
  if (counts.activity !== calls) problems.push(`${counts.activity} execute activity rows`);
  if (counts.operations !== calls) problems.push(`${counts.operations} succeeded operations`);
  if (counts.otherCalls !== 0) problems.push(`${counts.otherCalls} other activity rows of read calls`);
  if (problems.length > 0) {
    throw new Error(`ledger check failed for ${where}: ${calls} calls succeeded, but the database holds ${problems.join(", ")}`);
  }
}

/**
 * Throws unless the grant of the grant rows authorized exactly `calls` writes in a SQLite file: as many
 * succeeded execute activity rows naming it, and as many uses counted on it.
 */
export function checkGrantLedger({ sqliteFile, grantId }, calls, where) {
  const db = new Database(sqliteFile, { readonly: true, fileMustExist: true });
  try {
    const activity = Number(
      db
        .prepare("SELECT count(*) AS n FROM activity WHERE tenant_id = ? AND kind = 'call' AND phase = 'execute' AND outcome = 'succeeded' AND grant_id = ?")
        .get(TENANT_ID, grantId).n,
    );
    const uses = Number(db.prepare("SELECT uses FROM grants WHERE tenant_id = ? AND grant_id = ?").get(TENANT_ID, grantId)?.uses);
    if (activity !== calls || uses !== calls) {
      throw new Error(
        `ledger check failed for ${where}: ${calls} calls succeeded, but ${activity} execute activity rows name grant ${grantId} and it counts ${uses} uses`,
      );
    }
  } finally {
    db.close();
  }
}
