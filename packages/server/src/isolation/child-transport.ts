/**
 * MCP over a child process's stdin/stdout, with the process in the host's hands: how it ended (exit code
 * or signal, so a heap limit shows as such in the log), a kill for a child that stopped answering, and its
 * stderr as lines for the log. A message larger than `maxMessageBytes` closes the connection.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import { ReadBuffer, serializeMessage, type JSONRPCMessage, type Transport } from "@modelcontextprotocol/client";

/** How a child process ended: its exit code, or the signal that stopped it. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** What to start and how to watch it. */
export interface ChildSpawn {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** The child's whole environment. */
  readonly env: Readonly<Record<string, string>>;
  readonly maxMessageBytes: number;
  /** One line the child wrote to stderr. */
  readonly onStderr: (line: string) => void;
  /** The child ended (after stdout closed, once). */
  readonly onExit: (exit: ChildExit) => void;
}

/** A Transport to a child process it starts. */
export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #spawn: ChildSpawn;
  #child: ChildProcessWithoutNullStreams | undefined;
  #closed = false;

  constructor(spawnOptions: ChildSpawn) {
    this.#spawn = spawnOptions;
  }

  /** The child's process id once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  start(): Promise<void> {
    const { command, args, cwd, env, maxMessageBytes, onStderr, onExit } = this.#spawn;
    return new Promise((resolve, reject) => {
      const child = spawn(command, [...args], { cwd, env: { ...env }, stdio: ["pipe", "pipe", "pipe"], windowsHide: true });
      this.#child = child;
      const buffer = new ReadBuffer({ maxBufferSize: maxMessageBytes });
      child.once("spawn", () => resolve());
      child.once("error", (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.stdin.on("error", () => {}); // a child that died while a message was on its way: its exit says so
      child.stdout.on("data", (chunk: Buffer) => {
        try {
          buffer.append(chunk);
          for (let message = buffer.readMessage(); message !== null; message = buffer.readMessage()) this.onmessage?.(message);
        } catch (error) {
          // A line that is not JSON-RPC, or too long: this child cannot be understood any more.
          this.onerror?.(error as Error);
          this.kill();
        }
      });
      createInterface({ input: child.stderr, crlfDelay: Number.POSITIVE_INFINITY }).on("line", onStderr);
      child.once("close", (code, signal) => {
        buffer.clear();
        this.#closed = true;
        onExit({ code, signal });
        this.onclose?.();
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const child = this.#child;
    if (child === undefined || this.#closed || !child.stdin.writable) return Promise.reject(new Error("the isolated process is not running"));
    return new Promise((resolve) => {
      if (child.stdin.write(serializeMessage(message))) resolve();
      else child.stdin.once("drain", () => resolve());
    });
  }

  /** Ends the child: closes its stdin (it exits on its own), and kills it if it is still there after `graceMs`. */
  async close(graceMs = 2000): Promise<void> {
    const child = this.#child;
    if (child === undefined || this.#closed) return;
    const ended = new Promise<void>((resolve) => child.once("close", () => resolve()));
    child.stdin.end();
    const timer = setTimeout(() => this.kill(), graceMs);
    await ended;
    clearTimeout(timer);
  }

  /** Stops the child at once (SIGKILL): a child that spins cannot be asked. */
  kill(): void {
    if (!this.#closed) this.#child?.kill("SIGKILL");
  }
}
