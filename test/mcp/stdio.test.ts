/**
 * `toolpact mcp --url <server>` from the outside: the real built binary started by the SDK's stdio client
 * transport, forwarding to a toolpact server over its HTTP API. Uses the built CLI (`pnpm build`).
 */
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, McpError, UrlElicitationRequiredError, type ElicitRequestURLParams, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { ASSISTANT_ID } from "../integration/support/plugins.js";
import { mintActorToken } from "../integration/support/tokens.js";
import { startCredentialsProxy, type CredentialsProxy } from "./support/credentials-proxy.js";
import { listAll, startMcpWorld, textOf, userWho, type McpWorld } from "./support/mcp-world.js";

const BIN = fileURLToPath(new URL("../../packages/cli/dist/bin.js", import.meta.url));
if (!existsSync(BIN)) throw new Error("packages/cli/dist is not built: run `pnpm build` before these tests");

describe("toolpact mcp (stdio)", () => {
  let world: McpWorld;
  let dir: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    world = await startMcpWorld();
    dir = mkdtempSync(path.join(tmpdir(), "toolpact-mcp-stdio-"));
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await world?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const actorToken = (sub = "user-1") => mintActorToken(world.secrets.actorSecret, { sub, expiresIn: 3600 });
  const pluginKey = () => world.keys.t1[ASSISTANT_ID]!.key;

  /** Starts `toolpact mcp` as a local agent's MCP client would, and connects the SDK client to it. */
  async function spawnBridge(options: {
    url?: string;
    env?: Record<string, string>;
    args?: string[];
    onUrlElicitation?: (params: ElicitRequestURLParams) => ElicitResult;
  }): Promise<Client> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "--url", options.url ?? world.stack.url, ...(options.args ?? [])],
      env: { PATH: process.env.PATH ?? "", ...options.env },
      stderr: "pipe",
    });
    const client = new Client(
      { name: "local-agent", version: "1.0.0" },
      { capabilities: options.onUrlElicitation === undefined ? {} : { elicitation: { url: {} } } },
    );
    const answer = options.onUrlElicitation;
    if (answer !== undefined) client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params as ElicitRequestURLParams));
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  const envKeys = async (sub?: string) => ({ TOOLPACT_PLUGIN_KEY: pluginKey(), TOOLPACT_ACTOR_TOKEN: await actorToken(sub) });

  it("lists the same tools under the same names as /mcp, and calls a read tool", async () => {
    const client = await spawnBridge({ env: await envKeys() });
    const overHttp = await listAll(await world.connect());
    expect(await listAll(client)).toEqual(overHttp);
    const result = await client.callTool({ name: "com-test-notes_list_notes", arguments: { query: "stdio" } });
    expect(result.structuredContent).toEqual({ notes: [{ id: "note-1", title: "first" }], query: "stdio" });
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
    // it forwards through /trpc and says so: the activity log records the call as an MCP call
    const operationId = (result._meta as Record<string, string>)["toolpact/operationId"];
    const page = await world.stack.adminQuery<{ events: { operationId?: string; via?: string }[] }>("listActivity", { tenantId: "t1" });
    expect(page.events.find((event) => event.operationId === operationId)?.via).toBe("mcp");
  });

  it("looks a called tool up alone (tools.find); from a server without tools.find it resolves the name from the listing", async () => {
    for (const older of [false, true]) {
      const proxy = await pathProxy(world.stack.url, older ? { "tools.find": "tools.absent" } : {});
      try {
        const client = await spawnBridge({ url: proxy.url, env: await envKeys() });
        for (const query of ["one", "two"]) {
          const result = await client.callTool({ name: "com-test-notes_list_notes", arguments: { query } });
          expect(result.structuredContent).toMatchObject({ query });
        }
        // A newer server is asked for the one tool each call; an older one is asked once, then listed.
        expect(proxy.paths.filter((p) => p !== "tools.execute")).toEqual(older ? ["tools.absent", "tools.list", "tools.list"] : ["tools.find", "tools.find"]);
        await expect(client.callTool({ name: "com-test-notes_no_such_tool", arguments: {} })).rejects.toThrow(/unknown tool "com-test-notes_no_such_tool"/);
      } finally {
        await proxy.close();
      }
    }
  });

  it("runs a confirmed write once the user approves on the page it was sent to", async () => {
    const decided: string[] = [];
    const client = await spawnBridge({ env: await envKeys(), onUrlElicitation: userWho(world, "approve", decided) });
    const before = world.stack.probe.invocations.get("create-note") ?? 0;
    const result = await client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Approved from stdio" } });
    expect(result.structuredContent).toMatchObject({ title: "Approved from stdio" });
    expect(decided).toHaveLength(1);
    expect(world.stack.probe.invocations.get("create-note")).toBe(before + 1);
  });

  it("withdraws the request on the server when the client cancels the call", async () => {
    const asked: ElicitRequestURLParams[] = [];
    const client = await spawnBridge({ env: await envKeys(), onUrlElicitation: (params) => (asked.push(params), { action: "accept" }) });
    const stop = new AbortController();
    const calling = client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Cancelled" } }, undefined, { signal: stop.signal });
    await expect.poll(() => asked.length).toBe(1);
    stop.abort();
    await expect(calling).rejects.toThrow();
    const principal = await world.stack.runtime.authenticate({ pluginKey: pluginKey(), actorToken: await actorToken() });
    await expect
      .poll(async () => (await world.stack.runtime.getConfirmation(principal, asked[0]!.elicitationId)).status, { timeout: 10_000 })
      .toBe("cancelled");
  });

  it("sends a client without URL elicitation to the page with the URL-elicitation-required error", async () => {
    const client = await spawnBridge({ env: await envKeys() });
    const error = await client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Link only" } }).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(UrlElicitationRequiredError);
    expect((error as UrlElicitationRequiredError).elicitations[0]?.url).toMatch(new RegExp(`^${world.stack.url}/confirm/`));
  });

  it("reads a --credentials file before every request: a refreshed actor token takes effect without a restart", async () => {
    const file = path.join(dir, "credentials.json");
    writeFileSync(file, JSON.stringify({ pluginKey: pluginKey(), actorToken: await actorToken("user-1") }), { mode: 0o600 });
    const client = await spawnBridge({ args: ["--credentials", file] });
    const seen = async () =>
      ((await client.callTool({ name: "com-test-notes_echo", arguments: {} })).structuredContent as { seen: { userId: string } }).seen.userId;
    expect(await seen()).toBe("user-1");
    writeFileSync(file, JSON.stringify({ pluginKey: pluginKey(), actorToken: await actorToken("user-2") }));
    expect(await seen()).toBe("user-2");
  });

  it("passes the server's refusal of a bad actor token on: a protocol error for the list, a tool error for a call", async () => {
    const client = await spawnBridge({ env: { TOOLPACT_PLUGIN_KEY: pluginKey(), TOOLPACT_ACTOR_TOKEN: "not-a-token" } });
    await expect(client.listTools()).rejects.toThrow(/UNAUTHENTICATED/);
    const result = await client.callTool({ name: "com-test-notes_echo", arguments: {} });
    expect(result).toMatchObject({ isError: true, _meta: { "toolpact/code": "UNAUTHENTICATED" } });
  });

  it("with its server down, answers tools/list that the server is unreachable and what to do (a list has no effect to be unknown)", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const closed = `http://127.0.0.1:${(probe.address() as { port: number }).port}`;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const client = await spawnBridge({ url: closed, env: await envKeys() });
    const error = await client.listTools().then(
      () => undefined,
      (failure: unknown) => failure as McpError,
    );
    expect(error).toBeInstanceOf(McpError);
    expect(error?.message).toMatch(
      new RegExp(
        `^MCP error -32603: REQUEST_NOT_SENT: could not reach the toolpact server at ${closed} \\(connect ECONNREFUSED [^)]+\\); the request was never sent, ` +
          "so nothing ran: check that the server is running and that the --url of toolpact mcp points at it, then call again$",
      ),
    );
    expect(error?.message).not.toMatch(/OUTCOME_UNKNOWN|took effect/);
  });

  it("pointed at something that is not a toolpact server, says so: REQUEST_NOT_SENT for a 404 page", async () => {
    const foreign = createServer((req, res) => {
      req.resume();
      res.writeHead(404, { "content-type": "text/html" }).end("<h1>Not Found</h1>");
    });
    await new Promise<void>((resolve) => foreign.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(foreign.address() as { port: number }).port}`;
      const client = await spawnBridge({ url, env: await envKeys() });
      const error = await client.listTools().then(
        () => undefined,
        (failure: unknown) => failure as McpError,
      );
      expect(error?.message).toBe(
        `MCP error -32603: REQUEST_NOT_SENT: the server at ${url}/trpc/tools.list answered HTTP 404 without toolpact's JSON: it is not a ` +
          "toolpact server or toolpact is not at that path (a wrong URL?), or something in front of toolpact refused the request; either " +
          "way nothing ran at toolpact: check that the --url of toolpact mcp is the toolpact server's base URL (the one toolpact serve or " +
          "toolpact dev prints), then call again",
      );
      const called = await client.callTool({ name: "com-test-notes_echo", arguments: {} });
      expect(called).toMatchObject({ isError: true, _meta: { "toolpact/code": "REQUEST_NOT_SENT" } });
      expect(textOf(called)).toMatch(/^REQUEST_NOT_SENT: the server at .+\/trpc\/tools\.find answered HTTP 404 without toolpact's JSON/);
    } finally {
      await new Promise<void>((resolve) => foreign.close(() => resolve()));
    }
  });

  // Four CLI processes one after another: on a machine busy with the rest of the suite each start can take
  // seconds. Each is killed after 20 s, so one that hangs fails its own assertion rather than the whole test's time.
  it("exits 2 with what to do when it has no credentials or no usable URL", { timeout: 90_000 }, async () => {
    const run = (args: string[], env: Record<string, string> = {}) =>
      promisify(execFile)(process.execPath, [BIN, "mcp", ...args], { env: { PATH: process.env.PATH ?? "", ...env }, timeout: 20_000 }).then(
        () => ({ code: 0, stderr: "" }),
        (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
      );
    const noKeys = await run(["--url", world.stack.url]);
    expect(noKeys.code).toBe(2);
    expect(noKeys.stderr).toContain("no credentials: pass --credentials <file>, or set TOOLPACT_PLUGIN_KEY and TOOLPACT_ACTOR_TOKEN");
    expect((await run([], await envKeys())).stderr).toContain("--url is required");
    expect((await run(["--url", "ftp://example.com"], await envKeys())).code).toBe(2);
    const missingFile = await run(["--url", world.stack.url, "--credentials", path.join(dir, "absent.json")]);
    expect(missingFile.code).toBe(2);
    expect(missingFile.stderr).toContain("absent.json: not found");
  });
});

/** A proxy in front of `target` that records each tRPC procedure asked for and renames those `rename` names. */
async function pathProxy(target: string, rename: Record<string, string>): Promise<CredentialsProxy & { paths: string[] }> {
  const paths: string[] = [];
  const proxy = await startCredentialsProxy(
    target,
    async () => ({}),
    (requested) => {
      const [pathname = "", query] = requested.split("?", 2);
      const procedure = pathname.replace(/^\/trpc\//, "");
      const renamed = rename[procedure] ?? procedure;
      paths.push(renamed);
      return `/trpc/${renamed}${query === undefined ? "" : `?${query}`}`;
    },
  );
  return { ...proxy, paths };
}
