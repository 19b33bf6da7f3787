import { TASK_CHANGED_COLUMNS, TASK_COLUMNS, taskChangeValues, taskFromRow, taskValues, type TaskRecord } from "../task-records.js";
import type { PostgresConnection } from "./connection.js";
import { placeholders, statement } from "./statements.js";

/** The PostgreSQL types of TASK_COLUMNS. */
const TASK_TYPES = [
  "text",
  "text",
  "text",
  "text",
  "text",
  "text",
  "text",
  "text",
  "text",
  "text",
  "bool",
  "int8",
  "text",
  "text",
  "int8",
  "int8",
  "int8",
  "text",
  "int8",
  "int4",
  "bytea",
  "bytea",
] as const;
/** The types of TASK_CHANGED_COLUMNS, looked up by name in TASK_COLUMNS. */
const CHANGED_TYPES = TASK_CHANGED_COLUMNS.map((column) => TASK_TYPES[TASK_COLUMNS.split(", ").indexOf(column)]!);
const CHANGED = TASK_CHANGED_COLUMNS.length;

const T = {
  insert: statement("insert_task", `INSERT INTO tasks (${TASK_COLUMNS}) VALUES (${placeholders(1, TASK_TYPES)})`),
  get: statement("get_task", "SELECT * FROM tasks WHERE tenant_id = $1::text AND task_id = $2::text"),
  replace: statement(
    "replace_task",
    `UPDATE tasks SET ${TASK_CHANGED_COLUMNS.map((column, index) => `${column} = $${index + 1}::${CHANGED_TYPES[index]}`).join(", ")}
     WHERE tenant_id = $${CHANGED + 1}::text AND task_id = $${CHANGED + 2}::text AND revision = $${CHANGED + 3}::int4`,
  ),
  open: statement(
    "open_tasks",
    "SELECT * FROM tasks WHERE task_status IN ('working', 'input_required') AND driver_until <= $1::int8 ORDER BY driver_until LIMIT $2::int",
  ),
  countOpen: statement(
    "count_open_tasks",
    `SELECT count(*)::int AS open FROM tasks WHERE tenant_id = $1::text AND caller_plugin_id = $2::text AND actor_user_id = $3::text
       AND task_status IN ('working', 'input_required')`,
  ),
  byConfirmation: statement("task_by_confirmation", "SELECT * FROM tasks WHERE tenant_id = $1::text AND confirmation_id = $2::text LIMIT 1"),
  /** Completed, failed or cancelled tasks past their time to live, in chunks. */
  prune: statement(
    "prune_tasks",
    `DELETE FROM tasks WHERE ctid = ANY (ARRAY(SELECT ctid FROM tasks WHERE expires_at <= $1::int8
       AND task_status IN ('completed', 'failed', 'cancelled') LIMIT $2::int))`,
  ),
};

/** The prune statement of `tasks`, for retention. */
export const PRUNE_TASKS = T.prune;

/** The `tasks` table of a PostgreSQL store (migration 8). */
export class PostgresTasks {
  readonly #db: PostgresConnection;

  constructor(db: PostgresConnection) {
    this.#db = db;
  }

  async insert(task: TaskRecord): Promise<void> {
    await this.#db.query("could not record a task", T.insert, taskValues(task, "boolean"));
  }

  async get(tenantId: string, taskId: string): Promise<TaskRecord | undefined> {
    const [row] = await this.#db.rows("could not read a task", T.get, [tenantId, taskId]);
    return row === undefined ? undefined : taskFromRow(row);
  }

  async replace(task: TaskRecord, expectedRevision: number): Promise<boolean> {
    const values = [...taskChangeValues(task, "boolean"), task.tenantId, task.taskId, expectedRevision];
    return ((await this.#db.query("could not update a task", T.replace, values)).rowCount ?? 0) === 1;
  }

  async open(now: number, limit: number): Promise<TaskRecord[]> {
    return (await this.#db.rows("could not list open tasks", T.open, [now, limit])).map(taskFromRow);
  }

  async countOpen(tenantId: string, callerPluginId: string, actorUserId: string): Promise<number> {
    const [row] = await this.#db.rows("could not count open tasks", T.countOpen, [tenantId, callerPluginId, actorUserId]);
    return Number(row?.open ?? 0);
  }

  async byConfirmation(tenantId: string, requestId: string): Promise<TaskRecord | undefined> {
    const [row] = await this.#db.rows("could not find a confirmation's task", T.byConfirmation, [tenantId, requestId]);
    return row === undefined ? undefined : taskFromRow(row);
  }
}
