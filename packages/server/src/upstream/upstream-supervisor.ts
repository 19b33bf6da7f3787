import type { ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { Client, ProtocolError, SdkError, SdkErrorCode, StreamableHTTPClientTransport, type CallToolResult, type Tool } from "@modelcontextprotocol/client";
import { StdioClientTransport, DEFAULT_INHERITED_ENV_VARS } from "@modelcontextprotocol/client/stdio";
import { DEFAULT_UPSTREAM_MAX_IN_FLIGHT } from "@toolpact/contract";
import { ProviderBusy, ProviderOutcomeUnknown, ProviderRefusal, type Logger } from "@toolpact/runtime";
import type { UpstreamEndpoint } from "./upstream-endpoint.js";

/** The MCP revisions toolpact speaks to an upstream, newest first. */
export const UPSTREAM_REVISIONS = ["2026-07-28", "2025-11-25"] as const;

/** Which revision to speak: the newest both sides know ("auto", the default), or exactly one. */
export type UpstreamRevision = "auto" | (typeof UPSTREAM_REVISIONS)[number];

/** Options of `UpstreamSupervisor`. */
export interface UpstreamSupervisorOptions {
  /** Named in every log line and error. */
  readonly pluginId: string;
  readonly endpoint: UpstreamEndpoint;
  readonly logger: Logger;
  /** Calls in flight at most; more are refused with ProviderBusy. Default DEFAULT_UPSTREAM_MAX_IN_FLIGHT. */
  readonly maxInFlight?: number;
  /** Restart back-off after a crash: the first delay, doubled per failed attempt up to `max`. Default 250 ms .. 30 s. */
  readonly restartDelayMs?: { readonly initial: number; readonly max: number };
  /** How long one connection attempt (spawn or HTTP, and the MCP handshake) may take. Default 10 s. */
  readonly connectTimeoutMs?: number;
  readonly revision?: UpstreamRevision;
  /** Told of each connection (the first and every restart) with the server's live tool list, before any call uses it. */
  readonly onConnected?: (connection: UpstreamConnection) => void;
}

/** A live connection as `onConnected` sees it. */
export interface UpstreamConnection {
  /** The MCP revision agreed with the server. */
  readonly protocolVersion: string;
  readonly serverName: string | undefined;
  readonly tools: readonly Tool[];
  /** 1 for the first connection, then one more per restart. */
  readonly generation: number;
}

/** Options of one call. */
export interface UpstreamCallOptions {
  /** The call's time limit, ms: after it the call is cancelled and its outcome unknown. */
  readonly timeoutMs: number;
  /** Aborting cancels the request upstream (`notifications/cancelled`); its outcome is then unknown. */
  readonly signal?: AbortSignal;
  /** Sent as the request's `_meta` (e.g. `traceparent`). */
  readonly meta?: Readonly<Record<string, unknown>> | undefined;
}

/** The upstream is not connected (starting, restarting or closed): nothing was sent. */
export class UpstreamUnavailable extends Error {
  override readonly name = "UpstreamUnavailable";
}

const DEFAULT_RESTART = { initial: 250, max: 30_000 } as const;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** A connection that lived this long was healthy: the next crash restarts after the first delay again. */
const HEALTHY_MS = 10_000;
/** The longest stderr line forwarded to the log, characters. */
const STDERR_LINE_MAX = 2000;

/**
 * Supervises one upstream MCP server: connects (spawning a stdio child with exactly its declared
 * environment, or reaching a Streamable HTTP URL with its bearer token), speaks the newest revision the
 * server knows, forwards a child's stderr to the log line by line with the plugin named, restarts it with
 * exponential back-off after a crash, bounds calls in flight, and stops it on `close`. A call never
 * repeats: one that may have reached the server and got no answer rejects with ProviderOutcomeUnknown.
 */
export class UpstreamSupervisor {
  readonly #options: UpstreamSupervisorOptions;
  readonly #maxInFlight: number;
  readonly #restart: { readonly initial: number; readonly max: number };
  #client: Client | undefined;
  /** The stdio child of the current connection, when there is one. */
  #child: ChildProcess | undefined;
  #connecting: Promise<Client> | undefined;
  #restartTimer: NodeJS.Timeout | undefined;
  #failures = 0;
  #connectedAt = 0;
  #generation = 0;
  #inFlight = 0;
  #closed = false;

  constructor(options: UpstreamSupervisorOptions) {
    this.#options = options;
    this.#maxInFlight = options.maxInFlight ?? DEFAULT_UPSTREAM_MAX_IN_FLIGHT;
    this.#restart = options.restartDelayMs ?? DEFAULT_RESTART;
  }

  /** Connects for the first time; on failure it keeps retrying with back-off and rejects with the first attempt's error. */
  start(): Promise<void> {
    return this.#connect().then(
      () => undefined,
      (error: unknown) => {
        this.#scheduleRestart();
        throw error;
      },
    );
  }

  /** True while connected: a call now is sent at once. */
  get connected(): boolean {
    return this.#client !== undefined;
  }

  /** Calls now in flight. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** The revision agreed with the server, while connected. */
  get protocolVersion(): string | undefined {
    return this.#client?.getNegotiatedProtocolVersion();
  }

  /** Whether a call now would be refused for capacity (ProviderBusy) without being sent. */
  get full(): boolean {
    return this.#inFlight >= this.#maxInFlight;
  }

  /**
   * Calls tool `name` once. Rejects with ProviderBusy (at `maxInFlight`; nothing sent), UpstreamUnavailable
   * (not connected; nothing sent), ProviderRefusal (the server answered with a JSON-RPC error, e.g. unknown
   * tool or invalid arguments) or ProviderOutcomeUnknown (sent, and the answer was lost: connection closed,
   * time limit, cancelled). An `isError` result is a result: the caller reads it.
   */
  async call(name: string, args: Readonly<Record<string, unknown>>, options: UpstreamCallOptions): Promise<CallToolResult> {
    const { pluginId } = this.#options;
    if (this.#inFlight >= this.#maxInFlight) {
      throw new ProviderBusy(`upstream of plugin "${pluginId}" has ${this.#inFlight} calls in flight, its maxInFlight`, 1000);
    }
    const client = this.#client;
    if (client === undefined || this.#closed) {
      throw new UpstreamUnavailable(
        `upstream of plugin "${pluginId}" is ${this.#closed ? "stopped" : "not connected (starting or restarting)"}: nothing was sent`,
      );
    }
    this.#inFlight++;
    try {
      return (await client.callTool(
        { name, arguments: { ...args }, ...(options.meta === undefined ? {} : { _meta: { ...options.meta } }) },
        { timeout: options.timeoutMs, maxTotalTimeout: options.timeoutMs, ...(options.signal === undefined ? {} : { signal: options.signal }) },
      )) as CallToolResult;
    } catch (error) {
      throw this.#callFailure(name, error);
    } finally {
      this.#inFlight--;
    }
  }

  /** The server's tool list, asked now. */
  async listTools(): Promise<readonly Tool[]> {
    const client = this.#client;
    if (client === undefined) throw new UpstreamUnavailable(`upstream of plugin "${this.#options.pluginId}" is not connected`);
    return (await client.listTools(undefined, { cacheMode: "bypass" })).tools;
  }

  /** Asks the server for a ping within `timeoutMs`: false when not connected, or no answer came in time. */
  async ping(timeoutMs: number): Promise<boolean> {
    const client = this.#client;
    if (client === undefined) return false;
    return client.ping({ timeout: timeoutMs }).then(
      () => true,
      () => false,
    );
  }

  /**
   * Kills the current stdio child at once (SIGKILL: a child that never yields cannot be asked); it is
   * restarted with back-off as after any crash, and calls in flight end as unknown. False when there is
   * no child to kill (not connected, or an HTTP upstream).
   */
  kill(reason: string): boolean {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return false;
    this.#options.logger.warn({ event: "upstream_killed", pluginId: this.#options.pluginId, pid: child.pid ?? null, reason });
    return child.kill("SIGKILL");
  }

  /** Stops the server (a stdio child is signalled and reaped) and any restart; calls in flight end as unknown. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#restartTimer);
    const client = this.#client ?? (await this.#connecting?.catch(() => undefined));
    this.#client = undefined;
    await client?.close().catch(() => {});
  }

  #callFailure(name: string, error: unknown): Error {
    const { pluginId } = this.#options;
    // A JSON-RPC error is the server's answer that it did not run the tool (unknown tool, bad arguments).
    if (error instanceof ProtocolError) return new ProviderRefusal(`upstream tool ${JSON.stringify(name)} answered with error ${error.code}: ${error.message}`);
    if (error instanceof SdkError && (error.code === SdkErrorCode.NotConnected || error.code === SdkErrorCode.CapabilityNotSupported)) {
      return new UpstreamUnavailable(`upstream of plugin "${pluginId}" is not connected: nothing was sent`);
    }
    const why = error instanceof SdkError ? error.code : error instanceof Error ? error.name : typeof error;
    return new ProviderOutcomeUnknown(`upstream tool ${JSON.stringify(name)} of plugin "${pluginId}" gave no answer (${why}): it may have run`, {
      cause: error,
    });
  }

  #connect(): Promise<Client> {
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #open(): Promise<Client> {
    const { pluginId, logger, endpoint } = this.#options;
    const client = new Client(
      { name: "toolpact", version: "1" },
      {
        capabilities: {},
        versionNegotiation: { mode: revisionMode(this.#options.revision ?? "auto") },
        // toolpact validates results against the manifest; an upstream asking for user input mid-call is refused.
        inputRequired: { autoFulfill: false },
      },
    );
    const transport = transportOf(endpoint);
    if (transport instanceof StdioClientTransport) this.#forwardStderr(transport.stderr as Readable | null);
    const timeoutMs = this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    // A close before the connection is handed out (the child died during the handshake) is noticed once it is.
    let closedEarly = false;
    client.onclose = () => {
      if (this.#client === client) this.#lost(client);
      else closedEarly = true;
    };
    try {
      await client.connect(transport, { timeout: timeoutMs });
      if (this.#closed) throw new UpstreamUnavailable(`upstream of plugin "${pluginId}" was stopped while it started`);
      const tools = (await client.listTools(undefined, { timeout: timeoutMs, cacheMode: "bypass" })).tools;
      const generation = ++this.#generation;
      const protocolVersion = client.getNegotiatedProtocolVersion() ?? "unknown";
      const serverName = client.getServerVersion()?.name;
      this.#options.onConnected?.({ protocolVersion, serverName, tools, generation });
      this.#client = client;
      this.#child = childOf(transport);
      this.#connectedAt = performance.now();
      logger.info({ event: "upstream_connected", pluginId, protocolVersion, server: serverName ?? null, tools: tools.length, generation });
      if (closedEarly) this.#lost(client);
      return client;
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    }
  }

  /** The connection closed: unless stopping, restart after a back-off that grows with each failure in a row. */
  #lost(client: Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    if (this.#closed) return;
    if (performance.now() - this.#connectedAt >= HEALTHY_MS) this.#failures = 0;
    const child = this.#child;
    this.#child = undefined;
    this.#options.logger.warn({
      event: "upstream_exited",
      pluginId: this.#options.pluginId,
      inFlight: this.#inFlight,
      exitCode: child?.exitCode ?? null,
      signal: child?.signalCode ?? null,
    });
    this.#scheduleRestart();
  }

  #scheduleRestart(): void {
    if (this.#closed || this.#restartTimer !== undefined) return;
    const delayMs = Math.min(this.#restart.max, this.#restart.initial * 2 ** this.#failures);
    this.#failures++;
    const { pluginId, logger } = this.#options;
    logger.info({ event: "upstream_restart_scheduled", pluginId, delayMs, attempt: this.#failures });
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = undefined;
      this.#connect().catch((error: unknown) => {
        logger.warn({
          event: "upstream_restart_failed",
          pluginId,
          errorClass: (error as Error)?.name ?? typeof error,
          message: String((error as Error)?.message),
        });
        this.#scheduleRestart();
      });
    }, delayMs);
    this.#restartTimer.unref();
  }

  /** A child's stderr, line by line, to the log with the plugin named (bounded: a line without end is cut). */
  #forwardStderr(stderr: Readable | null): void {
    if (stderr === null) return;
    const { pluginId, logger } = this.#options;
    const lines = createInterface({ input: stderr, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on("line", (line) => {
      logger.info({ event: "upstream_stderr", pluginId, line: line.length > STDERR_LINE_MAX ? `${line.slice(0, STDERR_LINE_MAX)}…` : line });
    });
  }
}

/**
 * The child process behind a started stdio transport. The SDK keeps it in a private field (2.4); when a
 * later SDK moves it, this answers undefined: `kill` then reports false and exits log no code.
 */
function childOf(transport: StdioClientTransport | StreamableHTTPClientTransport): ChildProcess | undefined {
  if (!(transport instanceof StdioClientTransport)) return undefined;
  const child = (transport as unknown as { _process?: unknown })._process;
  return child instanceof EventEmitter && typeof (child as ChildProcess).kill === "function" ? (child as ChildProcess) : undefined;
}

/** "auto" probes for 2026-07-28 and falls back to the 2025-11-25 handshake; a pinned revision has no fallback. */
function revisionMode(revision: UpstreamRevision): "auto" | "legacy" | { pin: string } {
  return revision === "auto" ? "auto" : revision === "2025-11-25" ? "legacy" : { pin: revision };
}

/** The SDK transport for an endpoint. A stdio child sees exactly `env`: the SDK's inherited defaults (HOME, PATH, ...) are unset. */
function transportOf(endpoint: UpstreamEndpoint): StdioClientTransport | StreamableHTTPClientTransport {
  if (endpoint.kind === "http") {
    const headers: Record<string, string> = endpoint.token === undefined ? {} : { Authorization: `Bearer ${endpoint.token}` };
    return new StreamableHTTPClientTransport(endpoint.url, { requestInit: { headers } });
  }
  // The SDK spreads its default environment under ours; Node's spawn leaves out variables set to undefined.
  const unset = Object.fromEntries(DEFAULT_INHERITED_ENV_VARS.map((name) => [name, undefined]));
  return new StdioClientTransport({
    command: endpoint.command,
    args: [...endpoint.args],
    cwd: endpoint.cwd,
    env: { ...unset, ...endpoint.env } as Record<string, string>,
    stderr: "pipe",
  });
}
