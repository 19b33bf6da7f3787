import type { ActivityListQuery, ActivityRecord } from "../store.js";
import { activityFromRow, type Row } from "../rows.js";
import type { SqliteStatements } from "./statements.js";

/** A page of a tenant's activity, newest first: all of it, or one actor's calls through one caller (call inside the queue's read). */
export function listActivity(s: SqliteStatements, tenantId: string, query: ActivityListQuery): ActivityRecord[] {
  const limit = Math.max(1, Math.floor(query.limit));
  let rows: Row[];
  const caller = query.caller;
  if (caller !== undefined) {
    rows = (
      query.beforeId === undefined
        ? s.listCallerActivity.all(tenantId, caller.actorUserId, caller.callerPluginId, limit)
        : s.listCallerActivityBefore.all(tenantId, caller.actorUserId, caller.callerPluginId, query.beforeId, limit)
    ) as Row[];
  } else {
    rows = (query.beforeId === undefined ? s.listActivity.all(tenantId, limit) : s.listActivityBefore.all(tenantId, query.beforeId, limit)) as Row[];
  }
  return rows.map(activityFromRow);
}
