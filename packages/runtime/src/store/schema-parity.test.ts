/**
 * The SQL schema is written twice (SQLite and PostgreSQL migrations): this compares what the two build,
 * table by table and column by column (name, nullability, rough type class), on a real SQLite database and
 * a real PostgreSQL schema, and checks that the state CHECKs of both list exactly the states
 * @toolpact/protocol defines. A column added to one migration and not the other fails here with a diff.
 */
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { CONFIRMATION_STATES, OPERATION_STATES } from "@toolpact/contract";
import { TASK_STATES } from "../tasks/task-states.js";
import { postgresTestGate } from "../testing/index.js";
import { usePostgresHarness } from "../testing/postgres-harness.js";
import { SQLITE_MIGRATIONS, migrate } from "./sqlite/migrations.js";

const gate = await postgresTestGate("Schema parity (SQLite against PostgreSQL)");

/** One column as both stores can describe it. */
interface Column {
  readonly nullable: boolean;
  /** text (also a list), integer (also PostgreSQL's boolean: SQLite keeps 0/1), real or bytes. */
  readonly type: string;
}
type Schema = Map<string, Map<string, Column>>;

/** Each store's own migration bookkeeping (named differently, not part of toolpact's data). */
const BOOKKEEPING = new Set(["schema_migrations", "toolpact_migrations"]);
/** The state lists each CHECK must hold, by column name. */
const STATE_COLUMNS: Record<string, readonly string[]> = {
  state: OPERATION_STATES,
  status: CONFIRMATION_STATES,
  task_status: TASK_STATES,
};

function typeClass(declared: string): string {
  const type = declared.toLowerCase();
  // A list is text[] in PostgreSQL and JSON text in SQLite: both "text" here.
  if (/^(text|character varying|varchar|character|array)/.test(type)) return "text";
  if (/^(integer|bigint|smallint|int|boolean)/.test(type)) return "integer";
  if (/^(real|double precision|numeric|float)/.test(type)) return "real";
  if (/^(blob|bytea)/.test(type)) return "bytes";
  return `unknown (${declared})`;
}

function sqliteSchema(): { schema: Schema; checks: string[] } {
  const db = new Database(":memory:");
  try {
    migrate(db, SQLITE_MIGRATIONS);
    const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as {
      name: string;
      sql: string;
    }[];
    const schema: Schema = new Map();
    for (const { name } of tables) {
      if (BOOKKEEPING.has(name)) continue;
      const columns = db.prepare(`PRAGMA table_info(${name})`).all() as { name: string; type: string; notnull: number; pk: number }[];
      schema.set(name, new Map(columns.map((c) => [c.name, { nullable: c.notnull === 0 && c.pk === 0, type: typeClass(c.type) }])));
    }
    return { schema, checks: tables.map((t) => t.sql) };
  } finally {
    db.close();
  }
}

/** Every difference between two schemas, one line each; empty when they match. */
function differences(sqlite: Schema, postgres: Schema): string[] {
  const lines: string[] = [];
  for (const table of new Set([...sqlite.keys(), ...postgres.keys()])) {
    const a = sqlite.get(table);
    const b = postgres.get(table);
    if (a === undefined || b === undefined) {
      lines.push(`table ${table}: only in ${a === undefined ? "PostgreSQL" : "SQLite"}`);
      continue;
    }
    for (const column of new Set([...a.keys(), ...b.keys()])) {
      const x = a.get(column);
      const y = b.get(column);
      if (x === undefined || y === undefined) lines.push(`${table}.${column}: only in ${x === undefined ? "PostgreSQL" : "SQLite"}`);
      else if (x.type !== y.type || x.nullable !== y.nullable) {
        const show = (c: Column) => `${c.type}${c.nullable ? " NULL" : " NOT NULL"}`;
        lines.push(`${table}.${column}: SQLite ${show(x)}, PostgreSQL ${show(y)}`);
      }
    }
  }
  return lines;
}

/** `column IN ('a', 'b')` (SQLite) or `column = ANY (ARRAY['a'::text, ...])` (PostgreSQL): the column and its list. */
function stateChecks(sql: string): { column: string; states: string[] }[] {
  const found: { column: string; states: string[] }[] = [];
  const pattern = /\(+\s*(\w+)\s*(?:IN\s*\(|=\s*ANY\s*\(\s*ARRAY\[)([^\])]*)/gi;
  for (const match of sql.matchAll(pattern)) {
    const column = match[1]!;
    if (!(column in STATE_COLUMNS)) continue;
    found.push({ column, states: [...match[2]!.matchAll(/'([^']*)'/g)].map((m) => m[1]!) });
  }
  return found;
}

describe("the SQLite schema", () => {
  it("checks every state column against exactly the states @toolpact/protocol defines", () => {
    const checks = sqliteSchema().checks.flatMap(stateChecks);
    expect(checks.length).toBeGreaterThanOrEqual(3);
    for (const { column, states } of checks) expect(states, `SQLite CHECK on ${column}`).toEqual([...STATE_COLUMNS[column]!]);
  });

  it("finds a state list that drifted from the protocol's (the check can fail)", () => {
    const drifted = stateChecks("CREATE TABLE x (state TEXT NOT NULL CHECK (state IN ('running', 'succeeded', 'failed')))");
    expect(drifted).toEqual([{ column: "state", states: ["running", "succeeded", "failed"] }]);
    expect(drifted[0]!.states).not.toEqual([...OPERATION_STATES]);
  });
});

describe.skipIf(gate.skip !== undefined)("the PostgreSQL schema against the SQLite schema", () => {
  const { admin, freshSchema, open } = usePostgresHarness(gate);

  async function postgresSchema(): Promise<{ schema: Schema; checks: string[] }> {
    const name = freshSchema();
    await open({ schema: name });
    const columns = await admin.query<{ table_name: string; column_name: string; is_nullable: string; data_type: string }>(
      "SELECT table_name, column_name, is_nullable, data_type FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position",
      [name],
    );
    const schema: Schema = new Map();
    for (const row of columns.rows) {
      if (BOOKKEEPING.has(row.table_name)) continue;
      const table = schema.get(row.table_name) ?? new Map<string, Column>();
      table.set(row.column_name, { nullable: row.is_nullable === "YES", type: typeClass(row.data_type) });
      schema.set(row.table_name, table);
    }
    const checks = await admin.query<{ def: string }>(
      "SELECT pg_get_constraintdef(c.oid) AS def FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = $1 AND c.contype = 'c'",
      [name],
    );
    return { schema, checks: checks.rows.map((row) => row.def) };
  }

  it("has the same tables and columns, each with the same nullability and type class", async () => {
    const { schema } = await postgresSchema();
    const sqlite = sqliteSchema().schema;
    expect(sqlite.size).toBeGreaterThan(5);
    expect(differences(sqlite, schema), "columns that differ between the two migrations").toEqual([]);
  });

  it("checks every state column against exactly the states @toolpact/protocol defines", async () => {
    const checks = (await postgresSchema()).checks.flatMap(stateChecks);
    expect(checks.length).toBeGreaterThanOrEqual(3);
    for (const { column, states } of checks) expect(states, `PostgreSQL CHECK on ${column}`).toEqual([...STATE_COLUMNS[column]!]);
  });

  it("reports a column missing on one side, and a nullability or type that differs (the comparison can fail)", () => {
    const one: Schema = new Map([
      [
        "t",
        new Map([
          ["a", { nullable: false, type: "text" }],
          ["b", { nullable: true, type: "integer" }],
        ]),
      ],
    ]);
    const other: Schema = new Map([
      [
        "t",
        new Map([
          ["a", { nullable: true, type: "text" }],
          ["c", { nullable: true, type: "integer" }],
        ]),
      ],
      ["u", new Map()],
    ]);
    expect(differences(one, other)).toEqual([
      "t.a: SQLite text NOT NULL, PostgreSQL text NULL",
      "t.b: only in SQLite",
      "t.c: only in PostgreSQL",
      "table u: only in PostgreSQL",
    ]);
  });
});
