/**
 * MCP against two `toolpact serve` processes (the built CLI) on one PostgreSQL database: an agent's call
 * waits on one instance while the person approves on the other instance's page; it runs once. At 2026-07-28
 * a requestState one instance minted is accepted by the other (the key derives from the shared storage key). A session
 * on one instance hears of a tool change made through the other.
 * Needs TOOLPACT_TEST_PG_URL; without it the file is skipped with one line saying so.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ToolListChangedNotificationSchema, type ElicitRequestURLParams } from "@modelcontextprotocol/sdk/types.js";
import { fetchPage, postDecision, signIn } from "../integration/support/confirm-page.js";
import { openTestDatabase, postgresSkipReason, type TestDatabase } from "../integration/support/postgres.js";
import { PROVIDER, adminOf, invocations, makeDeploymentSecrets, setUpTenant, writeConfig, writePlugins } from "../integration/support/pg-world.js";
import { killHard, requireBuiltCli, startServe, type ServeProcess } from "../integration/support/serve-process.js";

const skip = await postgresSkipReason("MCP on two toolpact serve instances sharing PostgreSQL");
if (skip === undefined) requireBuiltCli();

describe.skipIf(skip !== undefined)("MCP on two toolpact serve instances sharing one PostgreSQL database", () => {
  const secrets = makeDeploymentSecrets();
  const tenantId = "t-mcp";
  let db: TestDatabase;
  let root: string;
  let instances: ServeProcess[] = [];
  let headers: Record<string, string>;
  const clients: Client[] = [];

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "toolpact-mcp-pg-"));
    writePlugins(root);
    db = await openTestDatabase();
    const config = writeConfig(root, "mcp.config.json", { databaseOptions: { schema: db.freshSchema(), poolSize: 4 } });
    instances = await Promise.all(
      [0, 1].map(() => startServe({ cwd: root, args: ["--config", config], env: { ...secrets.env, TOOLPACT_DATABASE_URL: db.url }, timeoutMs: 30_000 })),
    );
    headers = await setUpTenant(instances[0]!.url, secrets, tenantId, {
      policy: { rules: [{ tools: `${PROVIDER}:*`, decision: "confirm", mode: "platform" }] },
    });
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await Promise.all(instances.map((serve) => killHard(serve)));
    await db?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("an agent's call waits on one instance, the person approves on the other's page, and it runs once", async () => {
    const [a, b] = instances;
    const asked: ElicitRequestURLParams[] = [];
    const client = new Client({ name: "pg-agent", version: "1.0.0" }, { capabilities: { elicitation: { url: {} } } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params as ElicitRequestURLParams);
      return { action: "accept" };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${a!.url}/mcp`), { requestInit: { headers } }));
    clients.push(client);

    const calling = client.callTool({ name: "com-test-pg_charge", arguments: { title: "approved on the other instance" } });
    await expect.poll(() => asked.length).toBe(1);
    const requestId = asked[0]!.elicitationId;
    const session = await signIn(b!.url, secrets.actorSecret, { tid: tenantId, sub: "user-1" });
    const page = await fetchPage(b!.url, requestId, session);
    expect(page.status).toBe(200);
    expect((await postDecision(b!.url, requestId, "approve", { session, csrf: page.csrf! })).status).toBe(200);

    const result = await calling;
    expect(result.structuredContent).toMatchObject({ done: true, title: "approved on the other instance", by: a!.pid });
    expect(invocations(root, tenantId).filter((entry) => entry.title === "approved on the other instance")).toHaveLength(1);
  });

  it("2026-07-28: a state minted by one instance is accepted by the other, and the approved call runs once", async () => {
    const [a, b] = instances;
    /** One 2026-07-28 tools/call of the charge tool, sent by hand to an instance. */
    const call = async (url: string, extra: Record<string, unknown> = {}) => {
      const envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { name: "pg-agent-2026", version: "1.0.0" },
        "io.modelcontextprotocol/clientCapabilities": { elicitation: { url: {} } },
      };
      const body = {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "com-test-pg_charge", arguments: { title: "2026 across instances" }, ...extra, _meta: envelope },
      };
      const response = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: {
          ...headers,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": "com-test-pg_charge",
        },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      return JSON.parse(text.startsWith("{") ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? "{}")) as {
        result?: {
          resultType?: string;
          requestState?: string;
          inputRequests?: { toolpact_approval?: { params?: { url?: string } } };
          structuredContent?: unknown;
        };
      };
    };
    const first = await call(a!.url);
    expect(first.result?.resultType).toBe("input_required");
    const requestId = new URL(first.result!.inputRequests!.toolpact_approval!.params!.url!).pathname.split("/").pop()!;
    const session = await signIn(b!.url, secrets.actorSecret, { tid: tenantId, sub: "user-1" });
    const page = await fetchPage(b!.url, requestId, session);
    expect((await postDecision(b!.url, requestId, "approve", { session, csrf: page.csrf! })).status).toBe(200);

    const retries = await Promise.all([b!.url, a!.url, b!.url].map((url) => call(url, { requestState: first.result!.requestState })));
    for (const retried of retries) expect(retried.result?.structuredContent).toMatchObject({ done: true, title: "2026 across instances" });
    expect(invocations(root, tenantId).filter((entry) => entry.title === "2026 across instances")).toHaveLength(1);
  });

  it("a session on one instance is told at once when the tools change through the other (LISTEN/NOTIFY, not the 15 s poll)", async () => {
    const [a, b] = instances;
    const client = new Client({ name: "pg-agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${a!.url}/mcp`), { requestInit: { headers } }));
    clients.push(client);
    const names = async () => (await client.listTools()).tools.map((tool) => tool.name);
    expect(await names()).toContain("com-test-pg_charge");
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      changed += 1;
    });
    await new Promise((resolve) => setTimeout(resolve, 500)); // the client's GET stream is open
    const started = performance.now();
    await adminOf(b!.url, secrets.adminKey).mutate("setPolicy", { tenantId, policy: { rules: [] } });
    await expect.poll(() => changed, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(await names()).toEqual([]);
  });
});
