import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";

/** Who owns a record: every read and write is scoped to one tenant and one user. */
export interface RecordOwner {
  readonly tenantId: string;
  readonly userId: string;
}

/** A note record as the notes plugin keeps it. */
export interface NoteRecord {
  readonly id: string;
  readonly title: string;
  readonly body: string;
  readonly tags: readonly string[];
  readonly createdAt: string;
  readonly archivedAt?: string;
}

/** What `create` stores. */
export interface NewRecord {
  readonly title: string;
  readonly body?: string;
  readonly tags?: readonly string[];
}

/** The notes plugin's own table: toolpact never reads or writes it. */
export interface RecordStore {
  /**
   * Inserts a record for its owner. `operationId` makes the insert happen once per operation:
   * a second call with the same operation id returns the first record.
   */
  create(owner: RecordOwner, record: NewRecord, operationId: string): NoteRecord;
  /** The owner's records (not archived) whose title or body contains `query`, newest first. */
  search(owner: RecordOwner, query: string, limit: number): NoteRecord[];
  /** One of the owner's records; undefined for another user's or tenant's record. */
  get(owner: RecordOwner, id: string): NoteRecord | undefined;
  /** Archives one of the owner's records; false when the owner has no such record. */
  archive(owner: RecordOwner, id: string): boolean;
  close(): void;
}

/** Where the notes plugin keeps its records unless NOTES_DB_PATH says otherwise: beside the host's store. */
export const DEFAULT_NOTES_DB = "./.toolpact/notes.db";

interface Row {
  id: string;
  title: string;
  body: string;
  tags: string;
  created_at: string;
  archived_at: string | null;
}

/** Opens (and creates, if needed) the notes database at `file`. Statements are prepared once. */
export function openRecordStore(file: string, clock: () => number = Date.now): RecordStore {
  if (file !== ":memory:") mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(`
    CREATE TABLE IF NOT EXISTS records (
      id TEXT PRIMARY KEY,
      tenant_id TEXT NOT NULL,
      user_id TEXT NOT NULL,
      operation_id TEXT NOT NULL UNIQUE,
      title TEXT NOT NULL,
      body TEXT NOT NULL,
      tags TEXT NOT NULL,
      created_at TEXT NOT NULL,
      archived_at TEXT
    );
    CREATE INDEX IF NOT EXISTS records_owner ON records (tenant_id, user_id, created_at);
  `);
  const insert = db.prepare(
    `INSERT INTO records (id, tenant_id, user_id, operation_id, title, body, tags, created_at)
     VALUES (@id, @tenantId, @userId, @operationId, @title, @body, @tags, @createdAt)
     ON CONFLICT (operation_id) DO NOTHING`,
  );
  const byOperation = db.prepare<[string, string, string], Row>("SELECT * FROM records WHERE operation_id = ? AND tenant_id = ? AND user_id = ?");
  const byId = db.prepare<[string, string, string], Row>("SELECT * FROM records WHERE id = ? AND tenant_id = ? AND user_id = ?");
  const search = db.prepare<[string, string, string, string, number], Row>(
    `SELECT * FROM records
     WHERE tenant_id = ? AND user_id = ? AND archived_at IS NULL
       AND (title LIKE ? ESCAPE '\\' OR body LIKE ? ESCAPE '\\')
     ORDER BY created_at DESC, id DESC LIMIT ?`,
  );
  const archive = db.prepare<[string, string, string, string]>(
    "UPDATE records SET archived_at = coalesce(archived_at, ?) WHERE id = ? AND tenant_id = ? AND user_id = ?",
  );

  return {
    create(owner, record, operationId) {
      insert.run({
        id: `rec_${randomUUID()}`,
        tenantId: owner.tenantId,
        userId: owner.userId,
        operationId,
        title: record.title,
        body: record.body ?? "",
        tags: JSON.stringify(record.tags ?? []),
        createdAt: new Date(clock()).toISOString(),
      });
      const row = byOperation.get(operationId, owner.tenantId, owner.userId);
      if (row === undefined) throw new Error(`operation ${operationId} already created a record for another owner`);
      return toRecord(row);
    },
    search(owner, query, limit) {
      const pattern = `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      return search.all(owner.tenantId, owner.userId, pattern, pattern, limit).map(toRecord);
    },
    get(owner, id) {
      const row = byId.get(id, owner.tenantId, owner.userId);
      return row === undefined ? undefined : toRecord(row);
    },
    archive(owner, id) {
      return archive.run(new Date(clock()).toISOString(), id, owner.tenantId, owner.userId).changes === 1;
    },
    close() {
      db.close();
    },
  };
}

function toRecord(row: Row): NoteRecord {
  const record = {
    id: row.id,
    title: row.title,
    body: row.body,
    tags: JSON.parse(row.tags) as string[],
    createdAt: row.created_at,
  };
  return row.archived_at === null ? record : { ...record, archivedAt: row.archived_at };
}
