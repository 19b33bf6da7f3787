/**
 * The activity log as an auditor takes it away: per tenant, the events of a time window widened to the
 * checkpoints around it (the one before, so the first event's link can be checked, and the first at or
 * after the window's end, so the last ones are covered), with those checkpoints. Events after the latest
 * checkpoint are exported without their chain columns: nothing signed covers them yet.
 */
import { uuidv7Floor } from "../ids.js";
import type { ActivityChainStore, ActivityCheckpointRecord, ChainedActivityRecord } from "../store/store.js";

/** Which part of the log to export. */
export interface ActivityExportQuery {
  readonly tenantId?: string;
  /** Unix ms: events at or after. */
  readonly since?: number;
  /** Unix ms: events before. */
  readonly until?: number;
}

/** One record of an export, in order: per tenant its checkpoints, then its events in id order. */
export type ActivityExportRecord =
  | { readonly type: "checkpoint"; readonly checkpoint: ActivityCheckpointRecord }
  | { readonly type: "event"; readonly event: ChainedActivityRecord };

/** Events read per page. */
const PAGE = 1000;

/** Streams the export of `query`. */
export async function* exportActivity(chain: ActivityChainStore, query: ActivityExportQuery): AsyncGenerator<ActivityExportRecord> {
  const tenants = query.tenantId === undefined ? await chain.listTenants() : [query.tenantId];
  const sinceId = query.since === undefined ? undefined : uuidv7Floor(query.since);
  const untilId = query.until === undefined ? undefined : uuidv7Floor(query.until);
  for (const tenantId of tenants) {
    const checkpoints = await chain.listCheckpoints(tenantId);
    const anchor = sinceId === undefined ? undefined : checkpoints.filter((checkpoint) => checkpoint.lastId < sinceId).at(-1);
    const end = untilId === undefined ? undefined : checkpoints.find((checkpoint) => checkpoint.lastId >= untilId);
    const kept = checkpoints.filter((checkpoint) => checkpoint.seq >= (anchor?.seq ?? 0) && checkpoint.seq <= (end?.seq ?? Number.POSITIVE_INFINITY));
    for (const checkpoint of kept) yield { type: "checkpoint", checkpoint };
    const covered = kept.at(-1)?.lastId;
    // Widened to the checkpoints: from after the anchor (or `since`), up to the end checkpoint (or `until`).
    // With no checkpoint before the window but one in it, the window starts where the chain does.
    let afterId = anchor?.lastId ?? (sinceId === undefined || kept.length > 0 ? undefined : before(sinceId));
    const lastId = end?.lastId;
    reading: for (;;) {
      const page = await chain.readChain(tenantId, {
        ...(afterId === undefined ? {} : { afterId }),
        ...(end === undefined && untilId !== undefined ? { beforeId: untilId } : {}),
        limit: PAGE,
      });
      for (const event of page) {
        if (lastId !== undefined && event.id > lastId) break reading;
        yield { type: "event", event: covered !== undefined && event.id <= covered ? event : unlinked(event) };
      }
      if (page.length < PAGE) break;
      afterId = page[page.length - 1]!.id;
    }
  }
}

/** The id just before `id` in sort order, for an exclusive lower bound that still includes `id`. */
function before(id: string): string {
  return id.slice(0, -1);
}

function unlinked(event: ChainedActivityRecord): ChainedActivityRecord {
  const { chainSeq: _seq, chainHash: _hash, ...rest } = event;
  return rest;
}
