// The two systems of the upstream benchmark: the same tool of a real registry MCP server (server-everything's
// `echo`, over stdio) called two ways in one process: directly with the MCP SDK v2 client, and through toolpact
// (startHost with a plugin whose manifest names that server as its upstream; `runtime.execute` runs the whole
// pipeline: authentication once, input validation, permission, policy, a durable operation and its activity
// row, then `tools/call` over the supervisor's stdio connection).
import { mkdir, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { loadHostConfig, startHost } from "@toolpact/server";
import { scratchDir } from "../lib/scratch.mjs";
import { CALLER_ID, PLUGIN_DIRS, TENANT_ID, mintActorToken } from "../lib/tenant.mjs";
import { hostSecrets, writeHostConfig } from "../lib/toolpact-host.mjs";

/** The provider's id in the bench tenant's policy is bench.items; the upstream plugin gets its own. */
export const UPSTREAM_ID = "bench.everything";
const CALLER_DIR = PLUGIN_DIRS[1];

/** `node <bin>` of server-everything, installed as a root dev dependency (never downloaded). */
function everythingArgs() {
  const require = createRequire(new URL("../../package.json", import.meta.url));
  const packageFile = require.resolve("@modelcontextprotocol/server-everything/package.json");
  const bin = require(packageFile).bin;
  return [path.join(path.dirname(packageFile), typeof bin === "string" ? bin : Object.values(bin)[0])];
}

const message = (i) => `item ${i % 1000}`;

function checkEcho(text, i, system) {
  if (typeof text !== "string" || !text.includes(message(i))) throw new Error(`${system}: echo ${i} answered ${JSON.stringify(text)}`);
}

async function connectDirect() {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: everythingArgs(), stderr: "ignore" }));
  return client;
}

/** The direct call: the MCP SDK v2 client over stdio. */
export async function startDirect() {
  const client = await connectDirect();
  return {
    call: async (i) => {
      const result = await client.callTool({ name: "echo", arguments: { message: message(i) } });
      checkEcho(result.content?.[0]?.text, i, "direct");
    },
    close: () => client.close(),
  };
}

/** The same call through toolpact: `runtime.execute` of the upstream plugin's tool. */
export async function startThroughToolpact() {
  // The manifest declares echo with the schema the server lists, as `toolpact import mcp` writes it.
  const probe = await connectDirect();
  const echo = (await probe.listTools()).tools.find((tool) => tool.name === "echo");
  await probe.close();
  if (echo === undefined) throw new Error("server-everything lists no echo tool");
  const dir = await scratchDir("toolpact-upstream-");
  const pluginDir = path.join(dir, "everything");
  await mkdir(pluginDir);
  await writeFile(
    path.join(pluginDir, "plugin.json"),
    JSON.stringify({
      id: UPSTREAM_ID,
      version: "1.0.0",
      permissions: ["tools:provide"],
      upstream: { command: process.execPath, args: everythingArgs(), maxInFlight: 64 },
      tools: [{ name: "echo", upstreamName: "echo", effect: "read", inputSchema: echo.inputSchema }],
    }),
  );
  await writeHostConfig(path.join(dir, "toolpact.config.json"), { plugins: [pluginDir, CALLER_DIR], database: path.join(dir, "toolpact.db") });
  const { actorSecret, env } = hostSecrets();
  const host = await startHost({ config: await loadHostConfig({ cwd: dir, env: {} }), env });
  const admin = host.runtime.admin;
  await admin.installPlugin(TENANT_ID, UPSTREAM_ID);
  await admin.installPlugin(TENANT_ID, CALLER_ID);
  await admin.setPolicy(TENANT_ID, { rules: [{ tools: `${UPSTREAM_ID}:*`, effects: ["read"], decision: "allow" }] });
  const { key: pluginKey } = await admin.issuePluginKey(TENANT_ID, CALLER_ID);
  const principal = await host.runtime.authenticate({ pluginKey, actorToken: mintActorToken(actorSecret), via: "http" });
  const ref = { providerId: UPSTREAM_ID, tool: "echo", version: 1 };
  return {
    info: { sqliteFile: path.join(dir, "toolpact.db") },
    call: async (i) => {
      const { result } = await host.runtime.execute(principal, ref, { message: message(i) });
      checkEcho(JSON.stringify(result), i, "through toolpact");
    },
    close: async () => {
      await host.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
