import type Database from "better-sqlite3";
import { TASK_CHANGED_COLUMNS, TASK_COLUMNS, taskChangeValues, taskFromRow, taskValues, type TaskRecord } from "../task-records.js";
import type { Row } from "../rows.js";

/** The `tasks` table of one SQLite database (migration 8); call each method inside the store's queue. */
export class SqliteTasks {
  readonly #insert: Database.Statement;
  readonly #get: Database.Statement;
  readonly #replace: Database.Statement;
  readonly #open: Database.Statement;
  readonly #byConfirmation: Database.Statement;
  readonly #countOpen: Database.Statement;

  constructor(db: Database.Database) {
    this.#insert = db.prepare(
      `INSERT INTO tasks (${TASK_COLUMNS}) VALUES (${TASK_COLUMNS.split(",")
        .map(() => "?")
        .join(", ")})`,
    );
    this.#get = db.prepare("SELECT * FROM tasks WHERE tenant_id = ? AND task_id = ?");
    this.#replace = db.prepare(
      `UPDATE tasks SET ${TASK_CHANGED_COLUMNS.map((column) => `${column} = ?`).join(", ")} WHERE tenant_id = ? AND task_id = ? AND revision = ?`,
    );
    this.#open = db.prepare("SELECT * FROM tasks WHERE task_status IN ('working', 'input_required') AND driver_until <= ? ORDER BY driver_until LIMIT ?");
    this.#byConfirmation = db.prepare("SELECT * FROM tasks WHERE tenant_id = ? AND confirmation_id = ? LIMIT 1");
    this.#countOpen = db
      .prepare("SELECT count(*) FROM tasks WHERE tenant_id = ? AND caller_plugin_id = ? AND actor_user_id = ? AND task_status IN ('working', 'input_required')")
      .pluck();
  }

  insert(task: TaskRecord): void {
    this.#insert.run(...taskValues(task, "integer"));
  }

  get(tenantId: string, taskId: string): TaskRecord | undefined {
    const row = this.#get.get(tenantId, taskId) as Row | undefined;
    return row === undefined ? undefined : taskFromRow(row);
  }

  replace(task: TaskRecord, expectedRevision: number): boolean {
    return this.#replace.run(...taskChangeValues(task, "integer"), task.tenantId, task.taskId, expectedRevision).changes === 1;
  }

  open(now: number, limit: number): TaskRecord[] {
    return (this.#open.all(now, limit) as Row[]).map(taskFromRow);
  }

  countOpen(tenantId: string, callerPluginId: string, actorUserId: string): number {
    return Number(this.#countOpen.get(tenantId, callerPluginId, actorUserId));
  }

  byConfirmation(tenantId: string, requestId: string): TaskRecord | undefined {
    const row = this.#byConfirmation.get(tenantId, requestId) as Row | undefined;
    return row === undefined ? undefined : taskFromRow(row);
  }
}
