/**
 * Hearing other instances: one connection per instance LISTENs on the channel the schema's triggers
 * NOTIFY on (tenant config changes, confirmation decisions, grants made or revoked). While it is down, `epoch()` answers
 * undefined, so nothing cached may be trusted; once it is back, the epoch moves and a `resync` is
 * announced, because changes made in between went unheard.
 */
import { Client } from "pg";
import type { StoreChange } from "../changes.js";
import { clientConfig } from "./connection.js";
import type { PostgresSettings } from "./settings.js";

/** The channel the triggers of migration 4 notify on. */
export const CHANGE_CHANNEL = "toolpact_changes";
/** How often the listening connection is checked (a silent network drops no socket), ms. */
const HEARTBEAT_MS = 5_000;
/** How long `close` waits for the server to see the connection end before dropping it, ms. */
const CLOSE_WAIT_MS = 500;
/** Reconnection delays: doubled from the first up to the last, ms. */
const FIRST_RETRY_MS = 100;
const LAST_RETRY_MS = 5_000;

/** What the listener hands on, and to whom. */
export interface ChangeListenerOptions {
  readonly settings: PostgresSettings;
  readonly emit: (change: StoreChange) => void;
}

/** One instance's LISTEN connection, reconnecting on its own until `close`. */
export class PostgresChangeListener {
  readonly #settings: PostgresSettings;
  readonly #emit: (change: StoreChange) => void;
  #client: Client | undefined;
  #schema: string | undefined;
  #listening = false;
  #generation = 0;
  #retryMs = FIRST_RETRY_MS;
  #timer: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: ChangeListenerOptions) {
    this.#settings = options.settings;
    this.#emit = options.emit;
  }

  /** Moves each time the connection goes down or comes back; undefined while it is down. */
  epoch(): number | undefined {
    return this.#listening ? this.#generation : undefined;
  }

  /** True while LISTEN is in place. */
  get listening(): boolean {
    return this.#listening;
  }

  /** Connects and LISTENs; a failure is retried in the background (the store works without hearing others). */
  async start(): Promise<void> {
    await this.#connect();
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    const settings = this.#settings;
    const client = new Client({
      ...clientConfig(settings, settings.connectionTimeoutMs * 2),
      application_name: `${settings.applicationName}/listen`.slice(0, 63),
    });
    client.on("error", () => this.#lost(client));
    client.on("end", () => this.#lost(client));
    client.on("notification", (message) => this.#heard(message.channel, message.payload));
    this.#client = client;
    try {
      await client.connect();
      this.#schema = String((await client.query<{ schema: string }>("SELECT current_schema() AS schema")).rows[0]?.schema);
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
    } catch {
      this.#lost(client);
      return;
    }
    if (this.#client !== client || this.#closed) return;
    const resumed = this.#generation > 0;
    this.#generation += 1;
    this.#listening = true;
    this.#retryMs = FIRST_RETRY_MS;
    this.#heartbeat = setInterval(() => {
      client.query("SELECT 1").catch(() => this.#lost(client));
    }, HEARTBEAT_MS);
    this.#heartbeat.unref();
    if (resumed) this.#emit({ kind: "resync" });
  }

  #heard(channel: string, payload: string | undefined): void {
    if (channel !== CHANGE_CHANNEL || payload === undefined) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload);
    } catch {
      return;
    }
    if (!Array.isArray(parsed) || parsed[0] !== this.#schema) return;
    const [, kind, tenantId, id] = parsed as unknown[];
    if (typeof tenantId !== "string") return;
    if (kind === "tenant") this.#emit({ kind: "tenant", tenantId });
    else if (kind === "confirmation" && typeof id === "string") this.#emit({ kind: "confirmation", tenantId, requestId: id });
    else if (kind === "grants" && typeof id === "string") this.#emit({ kind: "grants", tenantId, actorUserId: id });
  }

  /** The connection broke (or never came up): stop trusting, drop it, and try again later. */
  #lost(client: Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    if (this.#listening) this.#generation += 1;
    this.#listening = false;
    clearInterval(this.#heartbeat);
    client.removeAllListeners("notification");
    void endWithin(client, CLOSE_WAIT_MS);
    if (this.#closed) return;
    this.#timer = setTimeout(() => void this.#connect(), this.#retryMs);
    this.#timer.unref();
    this.#retryMs = Math.min(this.#retryMs * 2, LAST_RETRY_MS);
  }

  /** Stops listening for good. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#listening = false;
    clearTimeout(this.#timer);
    clearInterval(this.#heartbeat);
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) await endWithin(client, CLOSE_WAIT_MS);
  }
}

/** Ends `client`, and drops its socket when the server does not answer within `ms` (a silent network). */
async function endWithin(client: Client, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), ms);
  });
  const ended = await Promise.race([
    client.end().then(
      () => "ended" as const,
      () => "ended" as const,
    ),
    late,
  ]);
  clearTimeout(timer);
  if (ended === "late") (client as Client & { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}
