/**
 * MCP clients of the v2 SDK (`@modelcontextprotocol/client` 2.4) for the 2026-07-28 tests: over Streamable
 * HTTP to `/mcp` or over stdio to `toolpact mcp`, pinned to 2026-07-28 or left at their default (2025-11-25),
 * and raw JSON-RPC requests that carry the 2026-07-28 `_meta` envelope, for what no client would send.
 */
import { Client, StreamableHTTPClientTransport, type ElicitResult } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { ASSISTANT_ID } from "../../integration/support/plugins.js";
import type { ActorTokenSpec } from "../../integration/support/tokens.js";
import type { McpWorld } from "../../mcp/support/mcp-world.js";

/** The revision these tests speak. */
export const MODERN = "2026-07-28";

/** A URL-mode input request as the client's handler receives it (2026-07-28: no elicitationId). */
export interface UrlInput {
  readonly url: string;
  readonly message: string;
}

/** How a test client is made. */
export interface ModernClientOptions {
  /** Pin 2026-07-28 (default) or leave the client at its default negotiation (2025-11-25). */
  readonly pin?: boolean;
  readonly caller?: string;
  readonly actor?: ActorTokenSpec;
  /** Declares URL input and answers each URL request with this; without it the client declares none. */
  readonly onUrl?: (input: UrlInput) => ElicitResult | Promise<ElicitResult>;
}

function makeClient(options: ModernClientOptions): Client {
  const client = new Client(
    { name: "agent-2026", version: "1.0.0" },
    {
      capabilities: options.onUrl === undefined ? {} : { elicitation: { url: {} } },
      ...(options.pin === false ? {} : { versionNegotiation: { mode: { pin: MODERN } } }),
    },
  );
  const answer = options.onUrl;
  if (answer !== undefined) {
    client.setRequestHandler("elicitation/create", async (request) => {
      const params = request.params as { mode?: string; url?: string; message: string };
      if (params.mode !== "url" || params.url === undefined) throw new Error(`expected a URL input request, got ${JSON.stringify(params)}`);
      return answer({ url: params.url, message: params.message });
    });
  }
  return client;
}

/** A v2 client connected to the world's `/mcp`. */
export async function connectHttp(world: McpWorld, options: ModernClientOptions = {}): Promise<Client> {
  const client = makeClient(options);
  const headers = await world.headers(options.caller ?? ASSISTANT_ID, options.actor ?? {});
  await client.connect(new StreamableHTTPClientTransport(world.mcpUrl, { requestInit: { headers } }));
  return client;
}

/** A v2 client that started `toolpact mcp` (the built binary) as a local agent does. */
export async function connectStdio(bin: string, url: string, env: Record<string, string>, options: ModernClientOptions = {}): Promise<Client> {
  const client = makeClient(options);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "mcp", "--url", url],
    env: { PATH: process.env.PATH ?? "", ...env },
    stderr: "pipe",
  });
  await client.connect(transport);
  return client;
}

/** The confirmation request a page URL names (`.../confirm/<requestId>`). */
export function requestIdOf(url: string): string {
  const id = new URL(url).pathname.split("/").pop();
  if (id === undefined || id === "") throw new Error(`not a confirmation page URL: ${url}`);
  return id;
}

/** A JSON-RPC answer as the tests read it. */
export interface RawAnswer {
  readonly status: number;
  readonly id?: unknown;
  readonly result?: Record<string, unknown> & { resultType?: string; requestState?: string; inputRequests?: Record<string, { params?: { url?: string } }> };
  readonly error?: { code: number; message: string; data?: unknown };
}

/** Capabilities a raw request declares: URL input by default. */
const URL_INPUT = { elicitation: { url: {} } };

/**
 * One 2026-07-28 request sent by hand: `params` plus the `_meta` envelope (protocol version, client info,
 * capabilities), with the world's credentials for `caller` and `actor` unless `headers` replace them.
 */
export async function rawModern(
  world: McpWorld,
  method: string,
  params: Record<string, unknown>,
  options: {
    readonly id?: number | string;
    readonly version?: string;
    readonly capabilities?: object;
    readonly caller?: string;
    readonly actor?: ActorTokenSpec;
  } = {},
): Promise<RawAnswer> {
  const version = options.version ?? MODERN;
  const body = {
    jsonrpc: "2.0",
    id: options.id ?? 1,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": { name: "raw-2026", version: "1.0.0" },
        "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? URL_INPUT,
      },
    },
  };
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": version,
    "mcp-method": method,
    ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
    ...(await world.headers(options.caller ?? ASSISTANT_ID, options.actor ?? {})),
  };
  const response = await fetch(world.mcpUrl, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await response.text();
  const data = text.startsWith("{") ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? "{}");
  return { status: response.status, ...(JSON.parse(data) as Omit<RawAnswer, "status">) };
}
