/**
 * MCP tasks (`io.modelcontextprotocol/tasks`) on `/mcp` at 2026-07-28, end to end over HTTP: a confirmed
 * call becomes a task whose approval is a URL input request inside it; the person approves on toolpact's
 * page and the task completes with the call's one result; a client that does not declare the extension
 * never gets a task; a stranger's `tasks/*` find nothing; decline and cancel say nothing ran; and a task
 * survives a server restart (a new runtime and server on the same SQLite file and secrets finish it).
 *
 * The v2 SDK `Client` 2.4 has no tasks support (its typed surface leaves `tasks/*` out, and a `tools/call`
 * answered `resultType: "task"` is not a result it can hand back), so the task requests are JSON-RPC
 * sent with fetch, carrying the 2026-07-28 `_meta` envelope as a client would; the plain call without the
 * extension is made by the real `Client`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fetchPage, postDecision, signIn } from "../integration/support/confirm-page.js";
import { ASSISTANT_ID, OTHER_CALLER_ID } from "../integration/support/plugins.js";
import { callerHeadersOf, configureWorld, makeSecrets, startStack, type Stack, type WorldKeys } from "../integration/support/stack.js";
import type { ActorTokenSpec } from "../integration/support/tokens.js";
import { PLATFORM_POLICY } from "../mcp/support/mcp-world.js";
import { ended } from "./support/task-polls.js";

const MODERN = "2026-07-28";
const CREATE = "com-test-notes_create_note";
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} }, elicitation: { url: {} } };

/** A result as these tests read it: a task, a tool result inside it, or an acknowledgement. */
interface Fields {
  readonly [key: string]: unknown;
  readonly status?: string;
  readonly taskId?: string;
  readonly isError?: boolean;
  readonly result?: Fields;
  readonly _meta?: { readonly [key: string]: { readonly effectBegun?: boolean; readonly message?: string } };
}

/** One JSON-RPC answer. */
interface Answer {
  readonly result?: Fields;
  readonly error?: { code: number; message: string; data?: unknown };
}

let dir: string;
let dbFile: string;
const secrets = makeSecrets();
const running: Stack[] = [];
let keys: WorldKeys | undefined;

beforeEach(() => {
  keys = undefined;
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-mcp-tasks-"));
  dbFile = path.join(dir, "toolpact.db");
});
afterEach(async () => {
  for (const stack of running.splice(0)) await stack.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A server on the test's database file (the first one configures the tenants; later ones are restarts). */
async function start(): Promise<Stack> {
  const stack = await startStack({ dbFile, secrets, publicUrl: "self" });
  running.push(stack);
  if (keys === undefined) {
    keys = await configureWorld(stack);
    await stack.admin("setPolicy", { tenantId: "t1", policy: PLATFORM_POLICY });
  }
  return stack;
}
async function stop(stack: Stack): Promise<void> {
  running.splice(running.indexOf(stack), 1);
  await stack.close();
}

/** A 2026-07-28 request by hand: params plus the `_meta` envelope, with the caller's credentials. */
async function rpc(
  stack: Stack,
  method: string,
  params: Record<string, unknown>,
  options: { readonly capabilities?: object; readonly caller?: string; readonly actor?: ActorTokenSpec } = {},
): Promise<Answer> {
  const headers = await callerHeadersOf(keys!, secrets.actorSecret)(options.caller ?? ASSISTANT_ID, options.actor ?? {});
  const body = {
    jsonrpc: "2.0",
    id: 7,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": { name: "task-agent", version: "1.0.0" },
        "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? TASKS,
      },
    },
  };
  const name = typeof params.taskId === "string" ? params.taskId : typeof params.name === "string" ? params.name : undefined;
  const response = await fetch(`${stack.url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      ...(name === undefined ? {} : { "mcp-name": name }),
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const data = text.startsWith("{") ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? "{}");
  return JSON.parse(data) as Answer;
}

/** Polls `tasks/get` until the task ended (bounded: 200 polls, 25 ms apart). */
async function untilEnded(stack: Stack, taskId: string): Promise<Fields> {
  let task = (await rpc(stack, "tasks/get", { taskId })).result!;
  for (let poll = 0; poll < 200 && !ended({ status: task.status ?? "" }); poll++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    task = (await rpc(stack, "tasks/get", { taskId })).result!;
  }
  return task;
}

/** The person signs in to the confirmation page of `stack` and decides. */
async function decide(stack: Stack, requestId: string, decision: "approve" | "deny"): Promise<void> {
  const session = await signIn(stack.url, secrets.actorSecret, { sub: "user-1" });
  const page = await fetchPage(stack.url, requestId, session);
  if (page.csrf === undefined) throw new Error(`the confirmation page shows no decision form: HTTP ${page.status}`);
  const decided = await postDecision(stack.url, requestId, decision, { session, csrf: page.csrf });
  if (decided.status !== 200) throw new Error(`${decision} answered HTTP ${decided.status}`);
}

/** Starts a task for create-note; answers its id and the confirmation request its input request names. */
async function startConfirmedTask(stack: Stack, title: string): Promise<{ taskId: string; requestId: string; url: string }> {
  const created = await rpc(stack, "tools/call", { name: CREATE, arguments: { title } });
  expect(created.result).toMatchObject({ resultType: "task", status: "input_required", ttlMs: expect.any(Number), pollIntervalMs: 1000 });
  const taskId = created.result!.taskId as string;
  const got = await rpc(stack, "tasks/get", { taskId });
  expect(got.result).toMatchObject({ resultType: "complete", taskId, status: "input_required" });
  const [[requestId, request]] = Object.entries(got.result!.inputRequests as Record<string, { method: string; params: { mode: string; url: string } }>);
  expect(request).toMatchObject({ method: "elicitation/create", params: { mode: "url", url: expect.stringContaining(`/confirm/${requestId}`) } });
  return { taskId, requestId: requestId!, url: request!.params.url };
}

const created = (stack: Stack) => stack.probe.invocations.get("create-note") ?? 0;

describe("MCP tasks on /mcp (2026-07-28)", () => {
  it("server/discover advertises the extension", async () => {
    const stack = await start();
    const discover = await rpc(stack, "server/discover", {});
    expect(discover.result?.capabilities).toMatchObject({ extensions: { "io.modelcontextprotocol/tasks": {} } });
  });

  it("a confirmed call as a task: input_required with the page, approved there, completed with the one result", async () => {
    const stack = await start();
    const { taskId, requestId } = await startConfirmedTask(stack, "task note");
    expect(created(stack)).toBe(0);
    await decide(stack, requestId, "approve");
    const done = await untilEnded(stack, taskId);
    expect(done).toMatchObject({ status: "completed", result: { structuredContent: expect.any(Object) } });
    expect(done.result?.isError).toBeFalsy();
    // Asked again, the same result: the call ran once.
    expect((await rpc(stack, "tasks/get", { taskId })).result?.result).toEqual(done.result);
    expect(created(stack)).toBe(1);
  });

  it("never a task for a client that does not declare the extension: the real v2 Client gets input_required as before", async () => {
    const stack = await start();
    const plain = await rpc(stack, "tools/call", { name: CREATE, arguments: { title: "no tasks" } }, { capabilities: { elicitation: { url: {} } } });
    expect(plain.result?.resultType).toBe("input_required");
    const client = new Client({ name: "v2-agent", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`), {
        requestInit: { headers: await callerHeadersOf(keys!, secrets.actorSecret)(ASSISTANT_ID) },
      }),
    );
    try {
      const listed = await client.callTool({ name: "com-test-notes_list_notes", arguments: {} });
      expect(listed.isError).toBeFalsy();
      expect((listed as Record<string, unknown>).taskId).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it("tasks/* need the extension declared (-32021), and a task is found only by the caller and user that made it (-32602)", async () => {
    const stack = await start();
    const { taskId } = await startConfirmedTask(stack, "private");
    const undeclared = await rpc(stack, "tasks/get", { taskId }, { capabilities: { elicitation: { url: {} } } });
    expect(undeclared.error?.code).toBe(-32021);
    const unknown = await rpc(stack, "tasks/get", { taskId: "0".repeat(48) });
    expect(unknown.error?.code).toBe(-32602);
    for (const stranger of [{ caller: OTHER_CALLER_ID }, { actor: { sub: "user-2" } }]) {
      for (const method of ["tasks/get", "tasks/cancel"]) {
        const answer = await rpc(stack, method, { taskId }, stranger);
        expect(answer.error?.code, `${method} by ${JSON.stringify(stranger)}`).toBe(-32602);
        expect(answer.error?.message.replace(taskId, "ID")).toBe(unknown.error?.message.replace("0".repeat(48), "ID"));
      }
    }
    expect((await rpc(stack, "tasks/get", { taskId })).result?.status).toBe("input_required");
  });

  it("tasks/update declining the page ends the task with a tool error that says nothing ran", async () => {
    const stack = await start();
    const { taskId, requestId } = await startConfirmedTask(stack, "declined");
    // A response to a key the task never asked changes nothing.
    expect((await rpc(stack, "tasks/update", { taskId, inputResponses: { other: { action: "decline" } } })).result).toMatchObject({ resultType: "complete" });
    expect((await rpc(stack, "tasks/get", { taskId })).result?.status).toBe("input_required");
    expect((await rpc(stack, "tasks/update", { taskId, inputResponses: { [requestId]: { action: "decline" } } })).result).toMatchObject({
      resultType: "complete",
    });
    const done = await untilEnded(stack, taskId);
    expect(done).toMatchObject({ status: "completed", result: { isError: true, _meta: { "toolpact/code": "CONFIRMATION_DENIED" } } });
    expect(JSON.stringify(done.result?.content)).toContain("nothing ran");
    expect(created(stack)).toBe(0);
  });

  it("tasks/update accept: the task works while the user decides on the page, then completes", async () => {
    const stack = await start();
    const { taskId, requestId } = await startConfirmedTask(stack, "accepted");
    await rpc(stack, "tasks/update", { taskId, inputResponses: { [requestId]: { action: "accept" } } });
    const waiting = (await rpc(stack, "tasks/get", { taskId })).result;
    expect(waiting).toMatchObject({ status: "working" });
    expect(waiting?.inputRequests).toBeUndefined();
    await decide(stack, requestId, "approve");
    expect(await untilEnded(stack, taskId)).toMatchObject({ status: "completed" });
    expect(created(stack)).toBe(1);
  });

  it("a read answers at once, not as a task, even when the client declares the extension", async () => {
    const stack = await start();
    const read = await rpc(stack, "tools/call", { name: "com-test-notes_list_notes", arguments: {} });
    expect(read.result?.resultType).toBe("complete");
    expect(read.result?.taskId).toBeUndefined();
    expect(read.result?.isError).toBeFalsy();
  });

  it("tasks/cancel withdraws the pending confirmation: cancelled, the page can no longer approve, and the ack says nothing ran", async () => {
    const stack = await start();
    const { taskId, requestId } = await startConfirmedTask(stack, "cancelled");
    const cancel = await rpc(stack, "tasks/cancel", { taskId });
    expect(cancel.result).toMatchObject({ resultType: "complete", _meta: { "toolpact/cancel": { effectBegun: false } } });
    expect(cancel.result?._meta?.["toolpact/cancel"]?.message).toContain("nothing ran");
    expect((await rpc(stack, "tasks/get", { taskId })).result?.status).toBe("cancelled");
    await expect(decide(stack, requestId, "approve")).rejects.toThrow();
    expect(created(stack)).toBe(0);
  });

  it("a task survives a server restart: started on one server, approved and finished on the next", async () => {
    const first = await start();
    const { taskId, requestId } = await startConfirmedTask(first, "survives a restart");
    await stop(first);

    const second = await start();
    expect((await rpc(second, "tasks/get", { taskId })).result?.status).toBe("input_required");
    await decide(second, requestId, "approve");
    const done = await untilEnded(second, taskId);
    expect(done).toMatchObject({ status: "completed" });
    expect(done.result?.isError).toBeFalsy();
    expect(created(second)).toBe(1);
  });
});
