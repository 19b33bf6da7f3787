/**
 * MCP tasks across two `toolpact serve` processes (the built CLI) on one PostgreSQL database: a task
 * started on one instance is seen on the other; the instance that started it is killed (no graceful
 * shutdown); the person approves on the other instance's page, and the other instance finishes the task:
 * the call runs once. Needs TOOLPACT_TEST_PG_URL; without it the file is skipped with one line saying so.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchPage, postDecision, signIn } from "../integration/support/confirm-page.js";
import { openTestDatabase, postgresSkipReason, type TestDatabase } from "../integration/support/postgres.js";
import { PROVIDER, invocations, makeDeploymentSecrets, setUpTenant, writeConfig, writePlugins } from "../integration/support/pg-world.js";
import { killHard, requireBuiltCli, startServe, type ServeProcess } from "../integration/support/serve-process.js";
import { ended } from "./support/task-polls.js";

const skip = await postgresSkipReason("MCP tasks on two toolpact serve instances sharing PostgreSQL");
if (skip === undefined) requireBuiltCli();

/** A task answer as this test reads it. */
interface TaskAnswer {
  readonly result?: {
    readonly resultType?: string;
    readonly taskId?: string;
    readonly status?: string;
    readonly inputRequests?: Record<string, unknown>;
    readonly result?: { readonly isError?: boolean; readonly structuredContent?: Record<string, unknown> };
  };
  readonly error?: { readonly code: number; readonly message: string };
}

describe.skipIf(skip !== undefined)("MCP tasks on two toolpact serve instances sharing one PostgreSQL database", () => {
  const secrets = makeDeploymentSecrets();
  const tenantId = "t-tasks";
  let db: TestDatabase;
  let root: string;
  let instances: ServeProcess[] = [];
  let headers: Record<string, string>;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "toolpact-mcp-tasks-pg-"));
    writePlugins(root);
    db = await openTestDatabase();
    const config = writeConfig(root, "tasks.config.json", { databaseOptions: { schema: db.freshSchema(), poolSize: 4 } });
    instances = await Promise.all(
      [0, 1].map(() => startServe({ cwd: root, args: ["--config", config], env: { ...secrets.env, TOOLPACT_DATABASE_URL: db.url }, timeoutMs: 30_000 })),
    );
    headers = await setUpTenant(instances[0]!.url, secrets, tenantId, {
      policy: { rules: [{ tools: `${PROVIDER}:*`, decision: "confirm", mode: "platform" }] },
    });
  });
  afterAll(async () => {
    await Promise.all(instances.map((serve) => killHard(serve)));
    await db?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** One 2026-07-28 request declaring the tasks extension and URL input, sent by hand to an instance. */
  const rpc = async (url: string, method: string, params: Record<string, unknown>): Promise<TaskAnswer> => {
    const envelope = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "pg-task-agent", version: "1.0.0" },
      "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} }, elicitation: { url: {} } },
    };
    const name = (params.name ?? params.taskId) as string;
    const response = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        "mcp-name": name,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: envelope } }),
    });
    const text = await response.text();
    return JSON.parse(text.startsWith("{") ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? "{}")) as TaskAnswer;
  };

  it("started on one instance, which is then killed; approved on the other's page, which finishes it once", async () => {
    const [a, b] = instances;
    const title = "a task across instances";
    const created = await rpc(a!.url, "tools/call", { name: "com-test-pg_charge", arguments: { title } });
    expect(created.result).toMatchObject({ resultType: "task", status: "input_required" });
    const taskId = created.result!.taskId!;

    // Every instance sees the task, with the same confirmation page to show the user.
    const seenOnB = await rpc(b!.url, "tasks/get", { taskId });
    expect(seenOnB.result).toMatchObject({ status: "input_required" });
    const requestId = Object.keys(seenOnB.result!.inputRequests!)[0]!;
    expect(Object.keys((await rpc(a!.url, "tasks/get", { taskId })).result!.inputRequests!)).toEqual([requestId]);

    await killHard(a!);
    const session = await signIn(b!.url, secrets.actorSecret, { tid: tenantId, sub: "user-1" });
    const page = await fetchPage(b!.url, requestId, session);
    expect((await postDecision(b!.url, requestId, "approve", { session, csrf: page.csrf! })).status).toBe(200);

    let task = (await rpc(b!.url, "tasks/get", { taskId })).result!;
    for (let poll = 0; poll < 200 && !ended({ status: task.status ?? "" }); poll++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      task = (await rpc(b!.url, "tasks/get", { taskId })).result!;
    }
    expect(task).toMatchObject({ status: "completed", result: { structuredContent: { done: true, title, by: b!.pid } } });
    expect(task.result?.isError).toBeFalsy();
    expect(invocations(root, tenantId).filter((entry) => entry.title === title)).toHaveLength(1);
  });
});
