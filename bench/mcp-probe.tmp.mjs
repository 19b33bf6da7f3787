import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startToolpactHosts } from "./lib/toolpact-host.mjs";
import { startJsonServer, stopChild } from "./lib/processes.mjs";
const sdk = await startJsonServer(new URL("./overhead/servers/mcp.mjs", import.meta.url).pathname, { args: ["stateless"] });
const prof = process.argv[2] === "prof";
const hosts = await startToolpactHosts(prof ? { nodeArgs: ["--cpu-prof", "--cpu-prof-dir=/tmp/mcpprof"] } : {});
const headers = { authorization: `Bearer ${hosts.pluginKey}`, "x-toolpact-actor": hosts.actorToken };
async function withoutSessions(input, init = {}) {
  const h = new Headers(init.headers); h.delete("mcp-session-id");
  const response = await fetch(input, { ...init, headers: h });
  if (!response.headers.has("mcp-session-id")) return response;
  const stripped = new Headers(response.headers); stripped.delete("mcp-session-id");
  return new Response(response.body, { status: response.status, headers: stripped });
}
const make = async (stateless) => {
  const c = new Client({ name: "p", version: "1" });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${hosts.urls[0]}/mcp`), { requestInit: { headers }, ...(stateless ? { fetch: withoutSessions } : {}) }));
  return c;
};
const sdkClient = new Client({ name: "p", version: "1" }); await sdkClient.connect(new StreamableHTTPClientTransport(new URL(sdk.url)));
const clients0 = prof ? { stateless: await make(true) } : { session: await make(false), stateless: await make(true) };
const clients = { ...clients0, sdk: sdkClient };
import { readFileSync, readdirSync } from "node:fs";
const cpuOf = (pids) => pids.reduce((sum, pid) => { const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" "); return sum + Number(f[11]) + Number(f[12]); }, 0) * 10;
const servePids = () => readdirSync("/proc").filter((d) => /^\d+$/.test(d)).filter((pid) => { try { return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("toolpact-host-"); } catch { return false; } }).map(Number);
const pidsOf = { session: servePids(), stateless: servePids(), sdk: [sdk.child.pid] };
console.log(pidsOf);
for (const round of [1, 2, 3]) for (const [name, c] of Object.entries(clients)) {
  const times = []; const cpu0 = cpuOf(pidsOf[name]);
  for (let i = 0; i < 400; i++) { const t = performance.now(); const r = await c.callTool({ name: name === "sdk" ? "get-item" : "items_get_item", arguments: { id: String(i % 100) } }); if (r.isError) throw new Error(JSON.stringify(r)); times.push(performance.now() - t); }
  times.sort((a, b) => a - b); console.log(round, name, "p50", times[200].toFixed(3), "server cpu ms/call", ((cpuOf(pidsOf[name]) - cpu0) / 400).toFixed(3));
}
for (const c of Object.values(clients)) await c.close();
await hosts.stop(); stopChild(sdk.child);
