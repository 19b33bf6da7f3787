/**
 * The per-caller bounds for OAuth callers: requests are counted under the verified token's issuer,
 * client and subject, so a new token of the same caller shares its bound, another client has its own,
 * and a forged token naming someone else's issuer, client and subject cannot fill their share.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ASSISTANT_ID } from "../integration/support/plugins.js";
import { startMcpWorld, type McpWorld } from "../mcp/support/mcp-world.js";
import { BOT_CLIENT, STRANGER_CLIENT, startIssuer, TOOL_SCOPES, type TestIssuer } from "./support/oidc-issuer.js";

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };

describe("per-caller bounds of OAuth callers", () => {
  const resources: string[] = [];
  let issuer: TestIssuer;
  let world: McpWorld;

  const call = (bearer: string, tool: string) =>
    fetch(world.mcpUrl, {
      method: "POST",
      headers: { ...MCP_HEADERS, authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: {} } }),
    });

  beforeAll(async () => {
    issuer = await startIssuer(resources, { introspection: true });
    world = await startMcpWorld({
      bounds: { maxRequestsPerCaller: 1 },
      oauth: {
        issuers: [{ issuer: issuer.issuer, tenant: "t1", introspection: { clientId: BOT_CLIENT.id, clientSecret: BOT_CLIENT.secret } }],
        clients: { [BOT_CLIENT.id]: ASSISTANT_ID, [STRANGER_CLIENT.id]: ASSISTANT_ID },
      },
    });
    resources.push(world.stack.url);
  });
  afterAll(async () => {
    await world?.close();
    await issuer?.close();
  });

  it("counts a caller's tokens together, other clients apart, and a forged token under itself", async () => {
    const resource = world.stack.url;
    const first = await issuer.clientToken(BOT_CLIENT, { resource, scope: TOOL_SCOPES });
    const second = await issuer.clientToken(BOT_CLIENT, { resource, scope: TOOL_SCOPES });
    const other = await issuer.clientToken(STRANGER_CLIENT, { resource, scope: TOOL_SCOPES });
    const now = Math.floor(Date.now() / 1000);
    const forged = `${await issuer.sign({ iss: issuer.issuer, aud: resource, sub: BOT_CLIENT.id, client_id: BOT_CLIENT.id, scope: TOOL_SCOPES, iat: now, exp: now + 600 })}x`;
    expect(second).not.toBe(first);

    world.stack.probe.slowReadMs = 2_000;
    const holding = call(first, "com-test-notes_slow_read");
    for (let waited = 0; (world.stack.probe.invocations.get("slow-read") ?? 0) === 0 && waited < 100; waited += 1) await sleep(50);
    expect(world.stack.probe.invocations.get("slow-read")).toBe(1);

    const sameCaller = await call(second, "com-test-notes_echo");
    expect(sameCaller.status).toBe(429);
    expect(await sameCaller.text()).toContain("maxRequestsPerCaller");
    const otherClient = await call(other, "com-test-notes_echo");
    expect(otherClient.status).toBe(200);
    const forgery = await call(forged, "com-test-notes_echo");
    expect(forgery.status).toBe(401);

    expect((await holding).status).toBe(200);
    expect((await call(second, "com-test-notes_echo")).status).toBe(200);
  });

  it("never sends the admin key to the issuer: an admin request is counted under its key, not introspected as a token", async () => {
    const seen = issuer.requests.length;
    await world.stack.admin("setPluginEnabled", { tenantId: "t1", pluginId: ASSISTANT_ID, enabled: true });
    await world.stack.adminQuery("listActivity", { tenantId: "t1", limit: 1 });
    expect(issuer.requests.slice(seen)).toEqual([]);
    // whereas an opaque bearer on a caller's route is introspected (and refused)
    const opaque = await fetch(`${world.stack.url}/trpc/tools.list`, { headers: { authorization: "Bearer opaque-token-of-nobody" } });
    expect(opaque.status).toBe(401);
    expect(issuer.requests.slice(seen).some((path) => path.includes("introspect"))).toBe(true);
  });
});
