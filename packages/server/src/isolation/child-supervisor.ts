/**
 * Keeps an isolated provider's child process serving: starts it, restarts it with back-off whenever it ends
 * (a crash, its heap limit, or a kill), bounds the calls in flight, and kills a child that does not answer
 * a ping after a call was cancelled (a spinning JavaScript thread cannot be interrupted any other way).
 * Everything the child sends is read as untrusted; nothing it does can throw in the host's own code paths.
 */
import { Client, type CallToolResult } from "@modelcontextprotocol/client";
import type { Logger } from "@toolpact/runtime";
import { ChildProcessTransport, type ChildExit, type ChildSpawn } from "./child-transport.js";
import { HANDLER_META_KEY, type HandlerShape } from "./wire.js";

/** How a call to the child did not get an answer. */
export type ChildCallFailure =
  /** Nothing was sent: the child was restarting, or too many calls were in flight. */
  | "not-sent"
  /** The call was sent and the child ended, or answered something that is not an answer: it may have run. */
  | "lost";

/** A call to the child that got no answer; `failure` says whether it may have run. */
export class ChildCallError extends Error {
  override readonly name = "ChildCallError";
  constructor(
    readonly failure: ChildCallFailure,
    message: string,
  ) {
    super(message);
  }
}

/** Options of `ChildSupervisor`, every default filled in by its caller. */
export interface ChildSupervisorOptions {
  readonly pluginId: string;
  readonly spawn: Omit<ChildSpawn, "onStderr" | "onExit">;
  readonly maxInFlight: number;
  readonly logger: Logger;
  /** How long the child may take to start and list its tools, ms. */
  readonly startTimeoutMs: number;
  /** The first restart's delay, doubled after each quick death up to `maxRestartDelayMs`. */
  readonly restartDelayMs: number;
  readonly maxRestartDelayMs: number;
  /** A child that lived this long resets the back-off, ms. */
  readonly stableMs: number;
  /** How long a child may take to answer a ping after a call was cancelled before it is killed, ms. */
  readonly unresponsiveMs: number;
}

interface Connection {
  readonly generation: number;
  readonly client: Client;
  readonly transport: ChildProcessTransport;
  readonly tools: ReadonlyMap<string, HandlerShape>;
}

/** The longest stderr line logged whole. */
const STDERR_LINE_MAX = 2000;

/** One isolated child, kept running. */
export class ChildSupervisor {
  readonly #options: ChildSupervisorOptions;
  #current: Promise<Connection> | undefined;
  #generation = 0;
  #quickDeaths = 0;
  #inFlight = 0;
  #closed = false;
  #checking = false;

  constructor(options: ChildSupervisorOptions) {
    this.#options = options;
  }

  /** Starts the child and returns the tools it provides with their handler shapes; rejects with the reason it did not start. */
  async start(): Promise<ReadonlyMap<string, HandlerShape>> {
    this.#current = this.#connect();
    this.#current.catch(() => {});
    return (await this.#current).tools;
  }

  /**
   * Sends one `tools/call` and returns the child's result as it came (the caller reads it as untrusted).
   * @throws ChildCallError when no result came; an abort of `signal` rejects with its reason.
   */
  async call(
    request: { name: string; arguments: Record<string, unknown>; _meta: Record<string, unknown> },
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<CallToolResult> {
    const { pluginId, maxInFlight } = this.#options;
    if (this.#inFlight >= maxInFlight) {
      throw new ChildCallError(
        "not-sent",
        `the isolated process of "${pluginId}" has ${maxInFlight} calls in flight, its "process.maxInFlight": retry shortly`,
      );
    }
    this.#inFlight++;
    try {
      let connection: Connection;
      try {
        connection = await untilAborted(this.#current ?? Promise.reject(new Error("not started")), signal);
      } catch (error) {
        if (signal.aborted) throw error;
        throw new ChildCallError("not-sent", `the isolated process of "${pluginId}" is not running (it is restarting): retry shortly`);
      }
      try {
        return (await connection.client.callTool(request, { signal, timeout: timeoutMs })) as CallToolResult;
      } catch (error) {
        if (signal.aborted) {
          this.#checkAlive(connection);
          throw error;
        }
        throw new ChildCallError("lost", `the isolated process of "${pluginId}" gave no answer: ${(error as Error)?.message ?? "it ended"}`);
      }
    } finally {
      this.#inFlight--;
    }
  }

  /** Stops the child and restarts no more. */
  async close(): Promise<void> {
    this.#closed = true;
    const current = await this.#current?.catch(() => undefined);
    await current?.transport.close();
  }

  async #connect(): Promise<Connection> {
    const { pluginId, logger, spawn, startTimeoutMs } = this.#options;
    const generation = ++this.#generation;
    const startedAt = Date.now();
    const stderrTail: string[] = [];
    const transport = new ChildProcessTransport({
      ...spawn,
      onStderr: (line) => {
        const shown = line.length > STDERR_LINE_MAX ? `${line.slice(0, STDERR_LINE_MAX)}…` : line;
        stderrTail.push(shown);
        if (stderrTail.length > 5) stderrTail.shift();
        logger.warn({ event: "isolated_stderr", pluginId, line: shown });
      },
      onExit: (exit) => this.#ended(generation, exit, Date.now() - startedAt),
    });
    const client = new Client({ name: "toolpact-host", version: "1" });
    client.onerror = () => {}; // a malformed message from the child: its calls fail, the host goes on
    let timer: NodeJS.Timeout | undefined;
    try {
      const started = (async () => {
        await client.connect(transport);
        return toolsOf((await client.listTools()).tools);
      })();
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`it did not answer within ${startTimeoutMs / 1000} s`)), startTimeoutMs);
      });
      const tools = await Promise.race([started, timedOut]);
      if (this.#closed) await transport.close();
      return { generation, client, transport, tools };
    } catch (error) {
      transport.kill();
      const said = stderrTail.length > 0 ? `; it said: ${stderrTail.join(" | ")}` : "";
      throw new Error(`the isolated process of "${pluginId}" did not start: ${(error as Error)?.message ?? String(error)}${said}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A child ended: log how, and (unless closing) start the next one after the back-off. */
  #ended(generation: number, exit: ChildExit, livedMs: number): void {
    const { pluginId, logger, restartDelayMs, maxRestartDelayMs, stableMs } = this.#options;
    if (this.#closed || generation !== this.#generation) return;
    this.#quickDeaths = livedMs >= stableMs ? 0 : this.#quickDeaths + 1;
    const delayMs = Math.min(maxRestartDelayMs, restartDelayMs * 2 ** Math.max(0, this.#quickDeaths - 1));
    logger.warn({ event: "isolated_process_exited", pluginId, code: exit.code, signal: exit.signal, restartInMs: delayMs });
    this.#current = new Promise<void>((resolve) => setTimeout(resolve, delayMs).unref()).then(() => {
      if (this.#closed) throw new Error("closed");
      return this.#connect();
    });
    this.#current.catch(() => {});
  }

  /** After a cancelled call: a child that does not answer a ping is spinning, and is killed (then restarted). */
  #checkAlive(connection: Connection): void {
    if (this.#checking || this.#closed) return;
    this.#checking = true;
    const { pluginId, logger, unresponsiveMs } = this.#options;
    connection.client
      .ping({ timeout: unresponsiveMs })
      .catch(() => {
        if (connection.generation !== this.#generation) return;
        logger.warn({ event: "isolated_process_unresponsive", pluginId, afterMs: unresponsiveMs });
        connection.transport.kill();
      })
      .finally(() => {
        this.#checking = false;
      });
  }
}

/** The tools a child listed, with the handler shape each names (anything malformed is dropped, then missing at provide). */
function toolsOf(listed: readonly { name: string; _meta?: Record<string, unknown> | undefined }[]): ReadonlyMap<string, HandlerShape> {
  const tools = new Map<string, HandlerShape>();
  for (const tool of listed) {
    const shape = tool._meta?.[HANDLER_META_KEY] as Partial<HandlerShape> | undefined;
    tools.set(tool.name, { preview: shape?.preview === true, authorize: shape?.authorize === true });
  }
  return tools;
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
