// MCP `tools/call` at 2026-07-28 in process, with no network and no load client: the same Fetch `Request`
// (the body the v2 SDK client sends, pinned to 2026-07-28) handed to toolpact's Fetch handler (`/mcp`:
// authentication, the bridge, the whole pipeline on a SQLite ledger) and to the MCP SDK v2's own stateless
// handler (`createMcpHandler`, a fresh `McpServer` per request, as bench/overhead/servers/mcp-v2.mjs), beside
// `runtime.execute` alone. Sequential calls, interleaved rounds; µs per call. What is left between the two
// handlers, minus the pipeline, is the bridge's own cost over the SDK's.
// Usage: node bench/profile/mcp-2026-in-process.mjs [--rounds 10] [--calls 2000]
//        (node --cpu-prof ... bench/profile/mcp-2026-in-process.mjs --only toolpact, to profile one side)
import { parseArgs } from "node:util";
import { mcpToolName } from "@toolpact/mcp";
import { createFetchHandler, silentLogger } from "@toolpact/server";
import { READ_REF } from "../lib/tenant.mjs";
import { checkItem, inputOf } from "../lib/work.mjs";
import { createWorld } from "../lib/world.mjs";
import { createItemsMcpHandler } from "../overhead/servers/mcp-v2-handler.mjs";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "10" }, calls: { type: "string", default: "2000" }, only: { type: "string" } } });
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);

const world = await createWorld({});
const toolpact = createFetchHandler({ runtime: world.runtime, adminKey: undefined, logger: silentLogger });
const sdk = createItemsMcpHandler();

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "bench-load-client", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
/** The POST the v2 client sends for one `tools/call` at 2026-07-28. */
function callRequest(url, tool, i, headers = {}) {
  const body = JSON.stringify({ method: "tools/call", params: { name: tool, arguments: inputOf(i), _meta: ENVELOPE }, jsonrpc: "2.0", id: i });
  return new Request(url, {
    method: "POST",
    headers: {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "mcp-method": "tools/call",
      "mcp-name": tool,
      "mcp-protocol-version": "2026-07-28",
      ...headers,
    },
    body,
  });
}
async function checkAnswer(response, i, name) {
  const message = await response.json();
  const text = message.result?.content?.[0]?.text;
  if (text === undefined) throw new Error(`${name}: ${JSON.stringify(message)}`);
  checkItem(JSON.parse(text), inputOf(i).id, name);
}

const principal = await world.runtime.authenticate({ pluginKey: world.pluginKey, actorToken: world.actorToken });
const credentials = { authorization: `Bearer ${world.pluginKey}`, "x-toolpact-actor": world.actorToken };
const TOOL = mcpToolName(READ_REF.providerId, READ_REF.tool);
const subjects = {
  "runtime.execute": async (i) => checkItem((await world.runtime.execute(principal, READ_REF, inputOf(i))).result, inputOf(i).id, "runtime"),
  toolpact: async (i) => checkAnswer(await toolpact(callRequest("http://127.0.0.1/mcp", TOOL, i, credentials)), i, "toolpact"),
  "v2 SDK": async (i) => checkAnswer(await sdk.fetch(callRequest("http://127.0.0.1/mcp", "get-item", i)), i, "v2 SDK"),
};
const names = Object.keys(subjects).filter((name) => values.only === undefined || name.startsWith(values.only));
for (const name of names) for (let i = 0; i < 2_000; i++) await subjects[name](i);
const perCall = Object.fromEntries(names.map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const name of round % 2 === 0 ? names : [...names].reverse()) {
    const started = performance.now();
    for (let i = 0; i < CALLS; i++) await subjects[name](round * CALLS + i);
    perCall[name].push(((performance.now() - started) * 1000) / CALLS);
  }
}
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
for (const name of names) console.log(`${name}: ${median(perCall[name]).toFixed(1)} µs per call (median of ${ROUNDS} rounds of ${CALLS})`);
if (names.includes("toolpact") && names.includes("v2 SDK")) {
  const paired = median(perCall.toolpact.map((t, i) => t / perCall["v2 SDK"][i]));
  console.log(`toolpact /mcp ÷ v2 SDK handler: ${paired.toFixed(3)}x paired`);
  if (names.includes("runtime.execute")) {
    const bridge = median(perCall.toolpact.map((t, i) => t - perCall["runtime.execute"][i]));
    console.log(`toolpact /mcp minus runtime.execute: ${bridge.toFixed(1)} µs per call (authentication, bridge, SDK, Fetch)`);
  }
}
await toolpact.close();
await sdk.close();
await world.close();
