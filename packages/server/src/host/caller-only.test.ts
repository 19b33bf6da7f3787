/**
 * A caller with no code in the host: its folder holds only plugin.json (it `uses` tools and provides
 * none). `toolpact serve` loads it, an admin installs it for a tenant and issues its key over HTTP, and it
 * calls by key over HTTP (@toolpact/client) and over MCP (the MCP SDK's client), with no module anywhere.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createHttpTransport, isToolpactError } from "@toolpact/client";
import { loadHostConfig } from "./config.js";
import { HostError } from "./host-error.js";
import { startHost, type RunningHost } from "./start-host.js";

const ISSUER = "https://id.example";
const TENANT = "acme";
const PROVIDER = "com.example.echo";
const CALLER = "com.example.chat-ui";

let dir: string;
let host: RunningHost;
const adminKey = randomBytes(32).toString("base64url");
const actorSecret = randomBytes(32);

function writeFolder(name: string, files: Record<string, unknown>): string {
  const folder = path.join(dir, "plugins", name);
  mkdirSync(folder, { recursive: true });
  for (const [file, content] of Object.entries(files)) {
    writeFileSync(path.join(folder, file), typeof content === "string" ? content : JSON.stringify(content, null, 2));
  }
  return folder;
}

async function admin(
  procedure: string,
  input: unknown,
): Promise<{ status: number; body: { result?: { data?: unknown }; error?: { message: string; data: Record<string, unknown> } } }> {
  const response = await fetch(`${host.url}/trpc/admin.${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${adminKey}` },
    body: JSON.stringify(input),
  });
  return { status: response.status, body: (await response.json()) as never };
}

function actorToken(): Promise<string> {
  return new SignJWT({ tid: TENANT, lvl: 1 })
    .setProtectedHeader({ alg: "HS256" })
    .setIssuer(ISSUER)
    .setAudience("toolpact")
    .setSubject("alice")
    .setExpirationTime("10m")
    .sign(actorSecret);
}

let callerKey: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-caller-only-"));
  const provider = writeFolder("echo", {
    "plugin.json": {
      id: PROVIDER,
      version: "1.0.0",
      permissions: ["tools:provide"],
      tools: [
        { name: "echo", effect: "read", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } },
        { name: "shout", effect: "read", inputSchema: { type: "object" } },
      ],
    },
    "package.json": { type: "module", main: "./main.js" },
    "main.js":
      "export function activate(sdk) {\n" +
      '  sdk.tools.provide("echo", { execute: (input, ctx) => ({ text: input.text, caller: ctx.callerPluginId }) });\n' +
      '  sdk.tools.provide("shout", { execute: () => ({ text: "HI" }) });\n' +
      "}\n",
  });
  // No package.json, no index.js: only the manifest.
  const caller = writeFolder("chat-ui", {
    "plugin.json": { id: CALLER, name: "Chat UI", version: "1.0.0", permissions: ["tools:call"], uses: [`${PROVIDER}:echo`] },
  });
  writeFileSync(path.join(dir, "toolpact.config.json"), JSON.stringify({ plugins: [provider, caller], actorIssuer: ISSUER, port: 0 }));
  const config = await loadHostConfig({ cwd: dir, env: {} });
  host = await startHost({
    config,
    env: {
      TOOLPACT_ADMIN_KEY: adminKey,
      TOOLPACT_ACTOR_SECRET: actorSecret.toString("base64"),
      TOOLPACT_SIGNING_KEYS: `k1:${randomBytes(32).toString("base64")}`,
      TOOLPACT_STORAGE_KEY: randomBytes(32).toString("base64"),
    },
  });
  for (const pluginId of [PROVIDER, CALLER]) expect((await admin("installPlugin", { tenantId: TENANT, pluginId })).status).toBe(200);
  expect((await admin("setPolicy", { tenantId: TENANT, policy: { rules: [{ tools: "*", decision: "allow" }] } })).status).toBe(200);
  const issued = await admin("issuePluginKey", { tenantId: TENANT, pluginId: CALLER });
  callerKey = (issued.body.result!.data as { key: string }).key;
});

afterAll(async () => {
  await host?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a caller whose folder holds only plugin.json", () => {
  it("is loaded by the host", () => {
    expect(host.plugins.map((manifest) => manifest.id)).toEqual([PROVIDER, CALLER]);
  });

  it("calls by key over HTTP through @toolpact/client", async () => {
    const transport = createHttpTransport({ url: host.url, pluginKey: callerKey, actorToken: await actorToken() });
    const answer = await transport.execute({ providerId: PROVIDER, tool: "echo" }, { text: "hi" });
    expect(answer.result).toEqual({ text: "hi", caller: CALLER });
  });

  it("stays within its uses", async () => {
    const transport = createHttpTransport({ url: host.url, pluginKey: callerKey, actorToken: await actorToken() });
    const refused = await transport.execute({ providerId: PROVIDER, tool: "shout" }, {}).catch((error: unknown) => error);
    expect(isToolpactError(refused) && refused.code).toBe("PERMISSION_DENIED");
  });

  it("calls by key over MCP", async () => {
    const client = new Client({ name: "chat-ui", version: "1.0.0" });
    const headers = { authorization: `Bearer ${callerKey}`, "x-toolpact-actor": await actorToken() };
    await client.connect(new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), { requestInit: { headers } }));
    try {
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(1);
      const called = await client.callTool({ name: tools[0]!.name, arguments: { text: "over mcp" } });
      expect(called.structuredContent).toEqual({ text: "over mcp", caller: CALLER });
    } finally {
      await client.close();
    }
  });

  it("the admin API names the config field for a plugin the host does not load", async () => {
    const { status, body } = await admin("installPlugin", { tenantId: TENANT, pluginId: "com.example.chat-iu" });
    expect(status).toBe(404);
    expect(body.error?.data.toolpactCode).toBe("PROVIDER_NOT_FOUND");
    expect(body.error?.message).toContain('did you mean "com.example.chat-ui"?');
    expect(body.error?.message).toContain('"plugins" in toolpact.config.json');
    const malformed = await admin("installPlugin", { tenantId: `${TENANT}\n`, pluginId: CALLER });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error?.data.toolpactCode).toBe("INPUT_INVALID");
  });
});

describe("a folder that declares tools still needs its module", () => {
  it("is refused at start-up, naming what it declares", async () => {
    const bare = writeFolder("bare-provider", {
      "plugin.json": {
        id: "com.example.bare",
        version: "1.0.0",
        permissions: ["tools:provide"],
        tools: [{ name: "x", effect: "read", inputSchema: { type: "object" } }],
      },
    });
    writeFileSync(path.join(dir, "toolpact.config.json"), JSON.stringify({ plugins: [bare], actorIssuer: ISSUER, port: 0 }));
    const config = await loadHostConfig({ cwd: dir, env: {} });
    const refused = await startHost({ config, env: {}, dev: true }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(HostError);
    expect((refused as HostError).details.join("\n")).toMatch(/no plugin module for "com\.example\.bare", which declares tools/);
  });
});
