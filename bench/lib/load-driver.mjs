// The load client of the HTTP benchmarks, in its own process: one client per compared system, each the
// client people would use with it (fetch, tRPC httpLink, @toolpact/client's HTTP transport, the MCP SDK client,
// which also calls toolpact's MCP bridge).
import { Client as ClientV2, StreamableHTTPClientTransport as StreamableHTTPClientTransportV2 } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createTRPCUntypedClient, httpLink } from "@trpc/client";
import { createHttpTransport } from "@toolpact/client";
import { httpFetch } from "@toolpact/client/internal";
import { mcpToolName } from "@toolpact/mcp";
import { serveDriver } from "./driver.mjs";
import { READ_REF, WRITE_REF } from "./tenant.mjs";
import { checkItem, inputOf } from "./work.mjs";

const makers = {
  /** fetch POST of a JSON body, JSON answer. */
  "bare-http": ({ url, name }) => ({
    call: async (i) => {
      const input = inputOf(i);
      const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(input) });
      if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
      checkItem(await response.json(), input.id, name);
    },
  }),
  /** One tRPC mutation through httpLink (no batching). */
  trpc: ({ url, name }) => {
    const client = createTRPCUntypedClient({ links: [httpLink({ url: `${url}/trpc` })] });
    return {
      call: async (i) => {
        const input = inputOf(i);
        checkItem(await client.mutation("items.get", input), input.id, name);
      },
    };
  },
  /** The same mutation through httpLink on the HTTP client createHttpTransport sends with (undici's pool in Node). */
  "trpc-undici": ({ url, name }) => {
    const client = createTRPCUntypedClient({ links: [httpLink({ url: `${url}/trpc`, fetch: httpFetch })] });
    return {
      call: async (i) => {
        const input = inputOf(i);
        checkItem(await client.mutation("items.get", input), input.id, name);
      },
    };
  },
  /** tools.execute of the read tool through createHttpTransport; several URLs are called in turn. */
  "toolpact-read": ({ urls, pluginKey, actorToken, name }) => {
    const transports = urls.map((url) => createHttpTransport({ url, pluginKey, actorToken }));
    return {
      call: async (i) => {
        const input = inputOf(i);
        const { operationId, result } = await transports[i % transports.length].execute(READ_REF, input);
        if (typeof operationId !== "string") throw new Error(`${name}: no operationId`);
        checkItem(result, input.id, name);
      },
    };
  },
  /** tools.preview, then tools.execute with the token-mode confirmation token: two round trips. */
  "toolpact-write": ({ urls, pluginKey, actorToken, name }) => {
    const transports = urls.map((url) => createHttpTransport({ url, pluginKey, actorToken }));
    return {
      call: async (i) => {
        const input = inputOf(i);
        const transport = transports[i % transports.length];
        const preview = await transport.preview(WRITE_REF, input);
        const confirmation = preview.confirmation;
        if (!confirmation.required || confirmation.mode !== "token") throw new Error(`${name}: expected a token-mode confirmation`);
        const { result } = await transport.execute(WRITE_REF, input, { confirmationToken: confirmation.token });
        checkItem(result, input.id, name);
      },
    };
  },
  /** tools/call through the MCP SDK client over Streamable HTTP (initialize once, then one POST per call). */
  mcp: async ({ url, name }) => mcpSystem(name, "get-item", new StreamableHTTPClientTransport(new URL(url), { fetch: sdkFetch })),
  /** The same SDK client against toolpact's MCP bridge (`/mcp` of `toolpact serve`) with the caller's credentials. */
  "toolpact-mcp": ({ urls, pluginKey, actorToken, name }) => mcpSystem(name, MCP_READ_TOOL, toolpactMcpTransport(urls[0], { pluginKey, actorToken })),
  /** tools/call at 2026-07-28 through the v2 SDK client (pinned: no initialize, one POST per call). */
  "mcp-2026": ({ url, name }) => mcp2026System(name, "get-item", new URL(url), {}),
  /** The same v2 client, pinned to 2026-07-28, against toolpact's MCP bridge with the caller's credentials. */
  "toolpact-mcp-2026": ({ urls, pluginKey, actorToken, name }) =>
    mcp2026System(name, MCP_READ_TOOL, new URL(`${urls[0]}/mcp`), { authorization: `Bearer ${pluginKey}`, "x-toolpact-actor": actorToken }),
  /** As above, without a session: the client never sees a session id, so each call is answered on its own. */
  "toolpact-mcp-stateless": ({ urls, pluginKey, actorToken, name }) =>
    mcpSystem(name, MCP_READ_TOOL, toolpactMcpTransport(urls[0], { pluginKey, actorToken }, withoutSessions)),
};

/** The read tool's MCP name on toolpact's bridge (`<last id segment>_<tool>`). */
const MCP_READ_TOOL = mcpToolName(READ_REF.providerId, READ_REF.tool);

/** An MCP SDK client calling `tool`; it reads the item from the text content, which every server sends. */
async function mcpSystem(name, tool, transport) {
  const client = new Client({ name: "bench-load-client", version: "1.0.0" });
  await client.connect(transport);
  return {
    info: { sessionId: transport.sessionId ?? null },
    call: async (i) => {
      const input = inputOf(i);
      const result = await client.callTool({ name: tool, arguments: input });
      if (result.isError) throw new Error(`${name}: tool error ${JSON.stringify(result.content)}`);
      const [first] = /** @type {{ type: string, text?: string }[]} */ (result.content);
      checkItem(JSON.parse(first?.text ?? "null"), input.id, name);
    },
    close: () => client.close(),
  };
}

/** A v2 SDK client pinned to 2026-07-28 calling `tool`; it reads the item from the text content. */
async function mcp2026System(name, tool, url, headers) {
  const client = new ClientV2({ name: "bench-load-client", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await client.connect(new StreamableHTTPClientTransportV2(url, { requestInit: { headers }, fetch: sdkFetch }));
  if (client.getProtocolEra() !== "modern") throw new Error(`${name}: the client did not land on 2026-07-28`);
  return {
    info: { era: client.getProtocolEra() },
    call: async (i) => {
      const input = inputOf(i);
      const result = await client.callTool({ name: tool, arguments: input });
      if (result.isError) throw new Error(`${name}: tool error ${JSON.stringify(result.content)}`);
      const [first] = /** @type {{ type: string, text?: string }[]} */ (result.content);
      checkItem(JSON.parse(first?.text ?? "null"), input.id, name);
    },
    close: () => client.close(),
  };
}

/**
 * The global fetch, for the MCP SDK client, noting the signals the SDK hands it. The SDK passes one
 * long-lived AbortSignal (its transport's) to every fetch, and Node's fetch (undici) adds an abort listener
 * to it per request that goes away only when the request is garbage-collected: at 32 in flight that is
 * thousands of listeners, past the limit of 1,500 undici sets itself, and a MaxListenersExceededWarning
 * with each new listener. Those warnings, and only those, are left out of this process's stderr.
 */
const sdkSignals = new WeakSet();
function sdkFetch(input, init) {
  if (init?.signal) sdkSignals.add(init.signal);
  return fetch(input, init);
}
const printWarning = process.listeners("warning");
process.removeAllListeners("warning");
process.on("warning", (warning) => {
  if (warning.name === "MaxListenersExceededWarning" && sdkSignals.has(warning.target ?? warning.emitter)) return;
  for (const print of printWarning) print.call(process, warning);
});

/** Streamable HTTP to `<url>/mcp` with a caller's plugin key and actor token. */
function toolpactMcpTransport(url, { pluginKey, actorToken }, fetch = sdkFetch) {
  const headers = { authorization: `Bearer ${pluginKey}`, "x-toolpact-actor": actorToken };
  return new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers }, fetch });
}

/** A fetch that hides session ids both ways: the SDK client then talks to the server as to a stateless one. */
async function withoutSessions(input, init = {}) {
  const headers = new Headers(init.headers);
  headers.delete("mcp-session-id");
  const response = await sdkFetch(input, { ...init, headers });
  if (!response.headers.has("mcp-session-id")) return response;
  const stripped = new Headers(response.headers);
  stripped.delete("mcp-session-id");
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers: stripped });
}

serveDriver(async (spec) => {
  const make = makers[spec.kind];
  if (make === undefined) throw new Error(`unknown system kind "${spec.kind}"`);
  return make(spec);
});
