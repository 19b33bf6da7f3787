import { MAX_ACTIVITY_PAGE, ToolpactError } from "@toolpact/contract";
import type { ActivityEvent, ActivityPage, ActivityQuery } from "../api.js";
import type { ActivityRecord, Store } from "../store/store.js";

/** Events per page when the query names no limit. */
export const DEFAULT_ACTIVITY_PAGE = 50;

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The public shape of a stored event. */
export function toActivityEvent(record: ActivityRecord): ActivityEvent {
  return { ...record, at: new Date(record.at).toISOString() };
}

/** Which page of whose activity to read. */
export interface ActivityPageRequest {
  readonly tenantId: string;
  /** Only this caller plugin's events for this actor (a caller reading its own); the whole tenant's when absent (its admin). */
  readonly caller?: { readonly actorUserId: string; readonly callerPluginId: string };
  readonly query: ActivityQuery | undefined;
}

/** One page of a tenant's activity (all of it, or one caller's for one actor), newest first. */
export async function readActivityPage(store: Store, request: ActivityPageRequest): Promise<ActivityPage> {
  const { tenantId, caller, query } = request;
  const limit = query?.limit ?? DEFAULT_ACTIVITY_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_ACTIVITY_PAGE) {
    throw new ToolpactError("INPUT_INVALID", `limit must be an integer from 1 to ${MAX_ACTIVITY_PAGE}; got ${limit}`, {
      issues: [{ path: "/limit", message: `must be an integer from 1 to ${MAX_ACTIVITY_PAGE}` }],
    });
  }
  const beforeId = query?.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const rows = await store.listActivity(tenantId, {
    limit: limit + 1,
    ...(caller === undefined ? {} : { caller }),
    ...(beforeId === undefined ? {} : { beforeId }),
  });
  const page = rows.slice(0, limit);
  const events = page.map(toActivityEvent);
  const last = page[page.length - 1];
  return rows.length > limit && last !== undefined ? { events, nextCursor: encodeCursor(last.id) } : { events };
}

function encodeCursor(id: string): string {
  return Buffer.from(`a1:${id}`, "utf8").toString("base64url");
}

function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const id = text.startsWith("a1:") ? text.slice(3) : "";
  if (!UUID_PATTERN.test(id)) {
    throw new ToolpactError("INPUT_INVALID", "the activity cursor is not one this runtime issued: pass nextCursor unchanged", {
      issues: [{ path: "/cursor", message: "not a cursor this runtime issued" }],
    });
  }
  return id;
}
