/**
 * What the operator console shows (`runtime.admin.views`), read from the store and the loaded manifests:
 * the activity timeline with filters and its counts over time, one operation's story, pending
 * confirmations, installed plugins with their tools, the policy and key ages. Never an input, an output,
 * a preview's text or a key: only the facts the activity log and the admin tables keep.
 * The server checks the admin credential before any of these is called.
 */
import type { Effect, Manifest } from "@toolpact/contract";
import { toActivityEvent } from "./activity/activity-page.js";
import type { ActivityEvent, ActivityOutcome, OperationState } from "./api.js";
import { uuidv7Floor } from "./ids.js";
import type { ActivityRecord, Store } from "./store/store.js";

/** Rows read per store page while filtering. */
const SCAN_PAGE = 500;
/** The most rows one view reads from the log: a filter that matches rarely says it stopped here. */
export const ADMIN_VIEW_SCAN_LIMIT = 20_000;
/** The most events a timeline shows. */
export const ADMIN_VIEW_MAX_EVENTS = 500;
/** The most pending requests, keys or tenants a view lists. */
const LIST_LIMIT = 1000;
/** The chart's span when no `since` is given: at least the last day. */
const DEFAULT_CHART_SPAN_MS = 24 * 60 * 60 * 1000;
/** How far before an operation began its confirmation may lie (the longest confirmation TTL, 1 h, and a margin). */
const STORY_LOOKBACK_MS = 2 * 60 * 60 * 1000;

/** Which events of one tenant's activity to show; every given field must match. */
export interface AdminActivityFilter {
  readonly tenantId: string;
  /** The caller plugin's id. */
  readonly caller?: string;
  /** The provider plugin's id. */
  readonly provider?: string;
  /** A tool's full name (`provider:tool`) or a substring of it. */
  readonly tool?: string;
  /** The actor's user id. */
  readonly actor?: string;
  readonly outcome?: ActivityOutcome;
  /** Unix ms, inclusive. */
  readonly since?: number;
  /** Unix ms, inclusive. */
  readonly until?: number;
  /** At most this many events (default and ceiling `ADMIN_VIEW_MAX_EVENTS`). */
  readonly limit?: number;
}

/** One span of the chart: its start (Unix ms), and the calls and refused calls in it that matched. */
export interface ActivityBucket {
  readonly start: number;
  readonly calls: number;
  readonly refusals: number;
}

/** How many spans the chart of a range has. */
export const ACTIVITY_CHART_BUCKETS = 24;

/** The events that matched, newest first, and how much of the log was read to find them. */
export interface AdminActivityResult {
  readonly events: readonly ActivityEvent[];
  /**
   * Every matching call in the range (not only the events shown) counted into `ACTIVITY_CHART_BUCKETS`
   * equal spans from `since` (else the oldest match) to `until` (else now); a refusal is a call whose
   * outcome is `denied`.
   */
  readonly chart: readonly ActivityBucket[];
  /** Rows read from the store. */
  readonly scanned: number;
  /** True when the scan stopped at `ADMIN_VIEW_SCAN_LIMIT` or at `limit` with more of the range unread. */
  readonly truncated: boolean;
}

/** An operation as the ledger keeps it, with every activity event that names it or its confirmation. */
export interface OperationStory {
  readonly tenantId: string;
  readonly operationId: string;
  readonly tool: string;
  readonly callerPluginId: string;
  readonly actorUserId: string;
  readonly providerPluginId: string;
  readonly state: OperationState;
  readonly errorCode?: string;
  readonly createdAt: string;
  readonly settledAt?: string;
  readonly recoveryAttempts: number;
  /** Oldest first. */
  readonly events: readonly ActivityEvent[];
}

/** A confirmation request waiting for its person (no preview text: the console never shows what was asked). */
export interface PendingConfirmationView {
  readonly requestId: string;
  readonly tool: string;
  readonly effect: Effect;
  readonly callerPluginId: string;
  readonly actorUserId: string;
  readonly createdAt: string;
  readonly expiresAt: string;
}

/** A plugin loaded into this host, and whether the tenant installed and enabled it. */
export interface AdminPluginView {
  readonly pluginId: string;
  readonly name?: string;
  readonly version: string;
  readonly installed: boolean;
  readonly enabled: boolean;
  readonly installedAt?: string;
  readonly tools: readonly { readonly name: string; readonly version: number; readonly effect: Effect; readonly requiresConfirmation: boolean }[];
}

/** The tenant's policy documents as set, and its configuration version. */
export interface AdminPolicyView {
  readonly tenantId: string;
  readonly configVersion: number;
  readonly policy?: unknown;
  readonly recoveryPolicy?: unknown;
  readonly activations: readonly {
    readonly pluginId: string;
    readonly gates: readonly string[];
    readonly hooks: readonly string[];
    readonly guards: readonly string[];
  }[];
}

/** A plugin key's id, owner and age (never its hash). */
export interface AdminKeyView {
  readonly keyId: string;
  readonly pluginId: string;
  readonly createdAt: string;
  readonly revokedAt?: string;
  /** Whole days from creation to now. */
  readonly ageDays: number;
}

/** The console's reads. */
export interface AdminViews {
  /** Tenants with any configuration, in order. */
  tenants(): Promise<readonly string[]>;
  activity(filter: AdminActivityFilter): Promise<AdminActivityResult>;
  /** Undefined when the tenant has no such operation (or it was pruned). */
  operationStory(tenantId: string, operationId: string): Promise<OperationStory | undefined>;
  pendingConfirmations(tenantId: string): Promise<readonly PendingConfirmationView[]>;
  plugins(tenantId: string): Promise<readonly AdminPluginView[]>;
  policy(tenantId: string): Promise<AdminPolicyView>;
  keys(tenantId: string): Promise<readonly AdminKeyView[]>;
}

/** What the views read. */
export interface AdminViewParts {
  readonly store: Store;
  readonly manifests: ReadonlyMap<string, Manifest>;
  readonly clock: () => number;
}

/** Makes the console's reads over a store and the loaded manifests. */
export function createAdminViews(parts: AdminViewParts): AdminViews {
  const { store, manifests, clock } = parts;
  const iso = (ms: number) => new Date(ms).toISOString();

  /** Reads the log newest first from `beforeId`, passing each row to `take` until it says stop or the scan limit is reached. */
  const scan = async (
    tenantId: string,
    beforeId: string | undefined,
    take: (row: ActivityRecord) => boolean,
  ): Promise<{ scanned: number; exhausted: boolean }> => {
    let cursor = beforeId;
    let scanned = 0;
    while (scanned < ADMIN_VIEW_SCAN_LIMIT) {
      const rows = await store.listActivity(tenantId, {
        limit: Math.min(SCAN_PAGE, ADMIN_VIEW_SCAN_LIMIT - scanned),
        ...(cursor === undefined ? {} : { beforeId: cursor }),
      });
      for (const row of rows) {
        scanned += 1;
        if (!take(row)) return { scanned, exhausted: false };
      }
      if (rows.length < SCAN_PAGE) return { scanned, exhausted: true };
      cursor = rows[rows.length - 1]!.id;
    }
    return { scanned, exhausted: false };
  };

  return Object.freeze({
    tenants: () => store.listTenantIds(LIST_LIMIT),

    async activity(filter: AdminActivityFilter): Promise<AdminActivityResult> {
      const limit = Math.max(1, Math.min(filter.limit ?? ADMIN_VIEW_MAX_EVENTS, ADMIN_VIEW_MAX_EVENTS));
      const until = filter.until ?? clock();
      const events: ActivityEvent[] = [];
      const calls: { readonly at: number; readonly refused: boolean }[] = [];
      let beforeRange = false;
      // Past `limit` events the scan goes on (to the range's start or the scan limit) only to count calls for the chart.
      const { scanned, exhausted } = await scan(filter.tenantId, filter.until === undefined ? undefined : uuidv7Floor(filter.until + 1), (row) => {
        if (filter.since !== undefined && row.at < filter.since) {
          beforeRange = true;
          return false;
        }
        if (row.at > until || !matches(row, filter)) return true;
        if (events.length < limit) events.push(toActivityEvent(row));
        if (row.kind === "call") calls.push({ at: row.at, refused: row.outcome === "denied" });
        return true;
      });
      const from = filter.since ?? Math.min(until, ...calls.slice(-1).map((call) => call.at), until - DEFAULT_CHART_SPAN_MS);
      return { events, chart: bucketCalls(calls, from, until), scanned, truncated: !exhausted && !beforeRange };
    },

    async operationStory(tenantId: string, operationId: string): Promise<OperationStory | undefined> {
      const operation = await store.getOperation(tenantId, operationId);
      if (operation === undefined) return undefined;
      const until = (operation.settledAt ?? clock()) + 60_000;
      const own: ActivityRecord[] = [];
      const others: ActivityRecord[] = [];
      await scan(tenantId, uuidv7Floor(until), (row) => {
        if (row.at < operation.createdAt - STORY_LOOKBACK_MS) return false;
        (row.operationId === operationId ? own : others).push(row);
        return true;
      });
      // The confirmation that let it run: the events of any request the operation's own events name.
      const confirmations = new Set(own.map((row) => row.confirmationId).filter((id) => id !== undefined));
      const related = others.filter((row) => row.confirmationId !== undefined && confirmations.has(row.confirmationId));
      const events = [...own, ...related].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(toActivityEvent);
      return {
        tenantId,
        operationId,
        tool: operation.tool,
        callerPluginId: operation.callerPluginId,
        actorUserId: operation.actorUserId,
        providerPluginId: operation.providerPluginId,
        state: operation.state,
        ...(operation.errorCode === undefined ? {} : { errorCode: operation.errorCode }),
        createdAt: iso(operation.createdAt),
        ...(operation.settledAt === undefined ? {} : { settledAt: iso(operation.settledAt) }),
        recoveryAttempts: operation.recoveryAttempts ?? 0,
        events,
      };
    },

    async pendingConfirmations(tenantId: string): Promise<readonly PendingConfirmationView[]> {
      const rows = await store.listPendingConfirmations(tenantId, clock(), LIST_LIMIT);
      return rows.map((row) => ({
        requestId: row.requestId,
        tool: row.tool,
        effect: row.effect,
        callerPluginId: row.callerPluginId,
        actorUserId: row.actorUserId,
        createdAt: iso(row.createdAt),
        expiresAt: iso(row.expiresAt),
      }));
    },

    async plugins(tenantId: string): Promise<readonly AdminPluginView[]> {
      const config = await store.loadTenantConfig(tenantId);
      const installs = new Map((config?.plugins ?? []).map((install) => [install.pluginId, install]));
      return [...manifests.values()]
        .sort((a, b) => a.id.localeCompare(b.id))
        .map((manifest) => {
          const install = installs.get(manifest.id);
          return {
            pluginId: manifest.id,
            ...(manifest.name === undefined ? {} : { name: manifest.name }),
            version: manifest.version,
            installed: install !== undefined,
            enabled: install?.enabled ?? false,
            ...(install === undefined ? {} : { installedAt: iso(install.installedAt) }),
            tools: manifest.tools.map((tool) => ({
              name: tool.name,
              version: tool.version,
              effect: tool.effect,
              requiresConfirmation: tool.requiresConfirmation,
            })),
          };
        });
    },

    async policy(tenantId: string): Promise<AdminPolicyView> {
      const config = await store.loadTenantConfig(tenantId);
      return {
        tenantId,
        configVersion: config?.version ?? 0,
        ...(config?.policy === undefined ? {} : { policy: JSON.parse(config.policy) as unknown }),
        ...(config?.recoveryPolicy === undefined ? {} : { recoveryPolicy: JSON.parse(config.recoveryPolicy) as unknown }),
        activations: config?.activations ?? [],
      };
    },

    async keys(tenantId: string): Promise<readonly AdminKeyView[]> {
      const now = clock();
      const rows = await store.listPluginKeys(tenantId, LIST_LIMIT);
      return rows.map((row) => ({
        keyId: row.keyId,
        pluginId: row.pluginId,
        createdAt: iso(row.createdAt),
        ...(row.revokedAt === undefined ? {} : { revokedAt: iso(row.revokedAt) }),
        ageDays: Math.max(0, Math.floor((now - row.createdAt) / 86_400_000)),
      }));
    },
  });
}

/** Counts calls into `ACTIVITY_CHART_BUCKETS` equal spans from `from` to `to` (Unix ms, inclusive). */
function bucketCalls(calls: readonly { readonly at: number; readonly refused: boolean }[], from: number, to: number): ActivityBucket[] {
  const width = Math.max(1, to - from + 1) / ACTIVITY_CHART_BUCKETS;
  const buckets = Array.from({ length: ACTIVITY_CHART_BUCKETS }, (_, i) => ({ start: Math.floor(from + i * width), calls: 0, refusals: 0 }));
  for (const call of calls) {
    if (call.at < from || call.at > to) continue;
    const bucket = buckets[Math.min(ACTIVITY_CHART_BUCKETS - 1, Math.floor((call.at - from) / width))]!;
    bucket.calls += 1;
    if (call.refused) bucket.refusals += 1;
  }
  return buckets;
}

/** True when a row passes every filter field given. */
function matches(row: ActivityRecord, filter: AdminActivityFilter): boolean {
  if (filter.caller !== undefined && row.callerPluginId !== filter.caller) return false;
  if (filter.provider !== undefined && row.providerPluginId !== filter.provider) return false;
  if (filter.actor !== undefined && row.actorUserId !== filter.actor) return false;
  if (filter.outcome !== undefined && row.outcome !== filter.outcome) return false;
  if (filter.tool !== undefined && !(row.tool ?? "").includes(filter.tool)) return false;
  return true;
}
