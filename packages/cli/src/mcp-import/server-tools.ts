import { Client, SdkHttpError, StreamableHTTPClientTransport, UnauthorizedError, type Implementation, type Tool } from "@modelcontextprotocol/client";
import { DEFAULT_INHERITED_ENV_VARS, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { Transport } from "@modelcontextprotocol/client";

/** The server to ask: a command started over stdio, or a Streamable HTTP endpoint. */
export type ServerTarget =
  | {
      readonly kind: "stdio";
      readonly command: string;
      readonly args: readonly string[];
      readonly cwd: string;
      /** The caller's environment, from which only `passEnv` reaches the server. */
      readonly env: NodeJS.ProcessEnv;
      /** The variables of `env` the server sees: no others, as when it is served. */
      readonly passEnv: readonly string[];
    }
  | { readonly kind: "http"; readonly url: string; readonly token?: string };

/** What the server said about itself and its tools. */
export interface ServerTools {
  readonly server: Implementation | undefined;
  readonly protocolVersion: string | undefined;
  readonly tools: readonly Tool[];
}

/** The server could not be asked: the message says what happened and what to do. */
export class ServerUnavailableError extends Error {}

/** The most of a server's stderr a failure shows, from its end. */
const STDERR_TAIL_BYTES = 4096;
/** The most pages of tools/list followed (a server whose cursor never ends is refused). */
const MAX_PAGES = 1000;

/**
 * Starts (stdio) or reaches (HTTP) the server, lists every tool (all pages) and closes it, within
 * `timeoutMs`. A stdio server sees only the `passEnv` variables of `env`, as when toolpact serves it, so
 * that a server that imports also starts when served.
 * @throws ServerUnavailableError when it would not start, closed early, refused the token or timed out.
 */
export async function listServerTools(target: ServerTarget, timeoutMs: number): Promise<ServerTools> {
  const stderr = new StderrTail();
  const transport = openTransport(target, stderr);
  // The newest revision both sides know, as toolpact serve asks it: 2026-07-28, else the 2025-11-25 handshake.
  const client = new Client({ name: "toolpact-import", version: "1.0.0" }, { listMaxPages: MAX_PAGES, versionNegotiation: { mode: "auto" } });
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), timeoutMs);
  try {
    await client.connect(transport, { timeout: timeoutMs, signal: timer.signal });
    const { tools } = await client.listTools(undefined, { timeout: timeoutMs, signal: timer.signal });
    return { server: client.getServerVersion(), protocolVersion: client.getNegotiatedProtocolVersion(), tools };
  } catch (error) {
    throw new ServerUnavailableError(describeFailure(target, error, timer.signal.aborted, timeoutMs, stderr.text()));
  } finally {
    clearTimeout(timeout);
    await client.close().catch(() => {});
  }
}

function openTransport(target: ServerTarget, stderr: StderrTail): Transport {
  if (target.kind === "http") {
    const headers: Record<string, string> = target.token === undefined ? {} : { authorization: `Bearer ${target.token}` };
    return new StreamableHTTPClientTransport(new URL(target.url), { requestInit: { headers } });
  }
  // Exactly what it sees when served: the SDK spreads its default environment (HOME, PATH, ...) under
  // ours, and Node's spawn leaves out a variable set to undefined.
  const env: Record<string, string | undefined> = Object.fromEntries(DEFAULT_INHERITED_ENV_VARS.map((name) => [name, undefined]));
  for (const name of target.passEnv) {
    const value = target.env[name];
    if (value !== undefined) env[name] = value;
  }
  const transport = new StdioClientTransport({
    command: target.command,
    args: [...target.args],
    cwd: target.cwd,
    env: env as Record<string, string>,
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => stderr.add(chunk));
  return transport;
}

function describeFailure(target: ServerTarget, error: unknown, timedOut: boolean, timeoutMs: number, stderr: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const tail = stderr === "" ? "" : `\nits stderr ended with:\n${stderr.replace(/^/gm, "    ")}`;
  if (target.kind === "http") {
    if (timedOut) return `${target.url} did not answer within ${timeoutMs / 1000} s: check the URL, or give it longer with --timeout`;
    const status = httpStatusOf(error);
    if (error instanceof UnauthorizedError || status === 401 || status === 403) {
      const advice = target.token === undefined ? "it needs a token: pass --token-file <file>" : "check the token in --token-file";
      return `${target.url} refused the request (${status === undefined ? message : `HTTP ${status}`}): ${advice}`;
    }
    return `could not list the tools of ${target.url}: ${message}; check that it is a Streamable HTTP MCP endpoint`;
  }
  const shown = [target.command, ...target.args].map((part) => (/^[\w@%+=:,./-]+$/.test(part) ? part : JSON.stringify(part))).join(" ");
  if ((error as NodeJS.ErrnoException).code === "ENOENT" || /\bENOENT\b/.test(message)) {
    return (
      `could not start ${JSON.stringify(target.command)}: no such program (from ${target.cwd}, with ${target.passEnv.includes("PATH") ? "your PATH" : "no PATH"}); ` +
      `check the command after --, or give its full path${tail}`
    );
  }
  if (timedOut)
    return `the server (${shown}) did not list its tools within ${timeoutMs / 1000} s: check that it speaks MCP on stdio, or give it longer with --timeout${tail}`;
  return `the server (${shown}) would not start or answer: ${message}${tail || "\n(it wrote nothing to stderr)"}`;
}

/** The HTTP status behind a transport failure (on the error or one of its causes). */
function httpStatusOf(error: unknown): number | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof SdkHttpError) return cause.status;
  }
  return undefined;
}

/** The last STDERR_TAIL_BYTES of what a server wrote to stderr, cut at a line start. */
class StderrTail {
  #buffer = Buffer.alloc(0);

  add(chunk: Buffer): void {
    const joined = Buffer.concat([this.#buffer, chunk]);
    this.#buffer = joined.length <= STDERR_TAIL_BYTES ? joined : joined.subarray(joined.length - STDERR_TAIL_BYTES);
  }

  text(): string {
    const text = this.#buffer.toString("utf8").replace(/\s+$/, "");
    return this.#buffer.length < STDERR_TAIL_BYTES ? text : text.slice(text.indexOf("\n") + 1);
  }
}
