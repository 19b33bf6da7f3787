/**
 * MCP sessions over Streamable HTTP: one SDK server and transport per session, owned by the (tenant,
 * caller, user) that initialized it, closed when idle. While a session's client holds its GET stream open,
 * its tool list is compared whenever the runtime signals that its tenant's config changed (at once for
 * changes through this instance, and for other instances' as soon as the store hears them), and
 * `notifications/tools/list_changed` sent when it differs; a slow poll catches what no signal announces.
 */
import { createHash, randomUUID } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport, type Server } from "@modelcontextprotocol/server";
import type { Principal, Logger, ToolChanges, ToolListing } from "@toolpact/runtime";

/** One live session. */
export interface McpSession {
  readonly id: string;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  /** The principal of the session's latest request (a refreshed actor token updates it). */
  principal: Principal;
}

interface SessionState extends McpSession {
  readonly owner: string;
  readonly server: Server;
  lastSeen: number;
  /** Open GET streams: notifications can reach the client only through one. */
  streams: number;
  /** A digest of the tool list the client last saw (or was told changed). */
  fingerprint: string | undefined;
  polling: boolean;
}

/** Options of `createSessionRegistry`. */
export interface SessionRegistryOptions {
  /** A new SDK server for a session (its tool handlers read the principal of each request). */
  readonly createServer: () => Server;
  /** The tool list a principal sees now, to notice changes. */
  readonly listTools: (principal: Principal) => Promise<readonly ToolListing[]>;
  /** The runtime's signal that a tenant's tools may have changed. */
  readonly toolChanges: ToolChanges;
  readonly idleMs: number;
  /**
   * How often watched lists are compared anyway, ms: while other instances' changes cannot be heard
   * (several processes on one SQLite file, or PostgreSQL's LISTEN down); ten times as long while they can
   * (for what no signal announces: a plugin registered late).
   */
  readonly toolsPollMs: number;
  /** Sessions one (tenant, caller, user) may hold; opening one more closes its least recently used. */
  readonly maxPerOwner: number;
  readonly logger: Logger;
}

/** The sessions of one `/mcp` endpoint. */
export interface SessionRegistry {
  /**
   * Opens a session for `principal`; its transport answers the initialize request it was opened for.
   * `stream`: answer calls as SSE streams, so requests and notifications can reach the client during a
   * call; without it answers are plain JSON (list changes still reach the client on its GET stream).
   */
  open(principal: Principal, options: { readonly stream: boolean }): Promise<McpSession>;
  /** The session, when it exists and `principal` is its owner (anyone else learns nothing). */
  get(id: string, principal: Principal): McpSession | undefined;
  /** Counts a GET stream of the session as open until `closed` fires. */
  holdStream(session: McpSession, closed: (listener: () => void) => void): void;
  readonly size: number;
  /** Ends every session and stops the timers. */
  close(): Promise<void>;
}

/** Makes the session registry of an `/mcp` endpoint. */
export function createSessionRegistry(options: SessionRegistryOptions): SessionRegistry {
  const sessions = new Map<string, SessionState>();
  const { logger } = options;

  const remove = (state: SessionState) => {
    if (sessions.get(state.id) === state) sessions.delete(state.id);
  };
  const end = async (state: SessionState) => {
    remove(state);
    await state.transport.close().catch(() => {});
    await state.server.close().catch(() => {});
  };

  const sweep = setInterval(
    () => {
      const idleSince = Date.now() - options.idleMs;
      for (const state of sessions.values()) if (state.streams === 0 && state.lastSeen < idleSince) void end(state);
    },
    Math.max(1_000, Math.min(60_000, options.idleMs / 2)),
  );
  sweep.unref();

  const poll = async (state: SessionState) => {
    state.polling = true;
    try {
      const fingerprint = fingerprintOf(await options.listTools(state.principal));
      if (state.fingerprint !== undefined && fingerprint !== state.fingerprint) await state.server.sendToolListChanged();
      state.fingerprint = fingerprint;
    } catch (error) {
      logger.warn({ event: "mcp_tools_poll_failed", errorClass: (error as Error)?.constructor?.name ?? typeof error });
    } finally {
      state.polling = false;
    }
  };
  /** Compares the watched lists of `tenantId`'s sessions (of every tenant when undefined). */
  const compare = (tenantId: string | undefined) => {
    for (const state of sessions.values()) {
      if (state.streams > 0 && !state.polling && (tenantId === undefined || state.principal.tenantId === tenantId)) void poll(state);
    }
  };
  const stopSignals = options.toolChanges.subscribe(compare);
  let lastPoll = Date.now();
  const watch = setInterval(
    () => {
      const every = options.toolChanges.hearsOthers() ? options.toolsPollMs * 10 : options.toolsPollMs;
      if (Date.now() - lastPoll < every) return;
      lastPoll = Date.now();
      compare(undefined);
    },
    Math.max(50, Math.min(options.toolsPollMs, 1_000)),
  );
  watch.unref();

  return {
    async open(principal, { stream }) {
      const owner = ownerOf(principal);
      const owned = [...sessions.values()].filter((state) => state.owner === owner).sort((a, b) => a.lastSeen - b.lastSeen);
      for (const state of owned.slice(0, Math.max(0, owned.length - options.maxPerOwner + 1))) await end(state);
      const server = options.createServer();
      const id = randomUUID();
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => id, enableJsonResponse: !stream });
      const state: SessionState = { id, owner, transport, server, principal, lastSeen: Date.now(), streams: 0, fingerprint: undefined, polling: false };
      transport.onclose = () => remove(state);
      await server.connect(transport);
      sessions.set(id, state);
      void poll(state);
      return state;
    },
    get(id, principal) {
      const state = sessions.get(id);
      if (state === undefined || state.owner !== ownerOf(principal)) return undefined;
      state.principal = principal;
      state.lastSeen = Date.now();
      return state;
    },
    holdStream(session, closed) {
      const state = sessions.get(session.id);
      if (state === undefined) return;
      state.streams += 1;
      closed(() => {
        state.streams -= 1;
        state.lastSeen = Date.now();
      });
    },
    get size() {
      return sessions.size;
    },
    async close() {
      clearInterval(sweep);
      clearInterval(watch);
      stopSignals();
      await Promise.all([...sessions.values()].map(end));
    },
  };
}

function ownerOf(principal: Principal): string {
  return `${principal.tenantId}\u0000${principal.callerPluginId}\u0000${principal.actor.userId}`;
}

function fingerprintOf(listing: readonly ToolListing[]): string {
  return createHash("sha256").update(JSON.stringify(listing)).digest("base64url");
}
