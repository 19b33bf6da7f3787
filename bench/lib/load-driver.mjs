// The load client of the HTTP benchmarks, in its own process: one client per compared system, each the
// client people would use with it (fetch, tRPC httpLink, @toolpact/client's HTTP transport, the MCP SDK client).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createTRPCUntypedClient, httpLink } from "@trpc/client";
import { createHttpTransport } from "@toolpact/client";
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
  mcp: async ({ url, name }) => {
    const client = new Client({ name: "bench-load-client", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    return {
      info: { sessionId: client.transport?.sessionId ?? null },
      call: async (i) => {
        const input = inputOf(i);
        const result = await client.callTool({ name: "get-item", arguments: input });
        if (result.isError) throw new Error(`${name}: tool error ${JSON.stringify(result.content)}`);
        const [first] = /** @type {{ type: string, text?: string }[]} */ (result.content);
        checkItem(JSON.parse(first?.text ?? "null"), input.id, name);
      },
      close: () => client.close(),
    };
  },
};

serveDriver(async (spec) => {
  const make = makers[spec.kind];
  if (make === undefined) throw new Error(`unknown system kind "${spec.kind}"`);
  return make(spec);
});
