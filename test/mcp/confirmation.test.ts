/**
 * Confirmed calls through the SDK client over a session: URL-mode elicitation to toolpact's own page,
 * the decision made there (over HTTP, as a browser's form posts it), progress while waiting, and every
 * way the call can end without running.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ElicitationCompleteNotificationSchema,
  UrlElicitationRequiredError,
  type ElicitRequestURLParams,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import type { Principal } from "../../packages/runtime/src/index.js";
import { CSRF_HEADER } from "../../packages/server/src/index.js";
import { ASSISTANT_ID } from "../integration/support/plugins.js";
import { fetchPage, postDecision, signIn } from "../integration/support/confirm-page.js";
import { mutate } from "../integration/support/wire.js";
import { startMcpWorld, textOf, userWho, type McpWorld } from "./support/mcp-world.js";

describe("confirmed calls over MCP (URL elicitation)", () => {
  let world: McpWorld;
  let clockOffset = 0;
  let principal: Principal;

  beforeAll(async () => {
    world = await startMcpWorld({ clock: () => Date.now() + clockOffset, mcp: { waitRoundMs: 150 } });
    principal = await world.stack.runtime.authenticate({
      pluginKey: world.keys.t1[ASSISTANT_ID]!.key,
      actorToken: (await world.headers())["x-toolpact-actor"]!,
    });
  });
  afterAll(async () => {
    await world?.close();
  });

  const created = () => world.stack.probe.invocations.get("create-note") ?? 0;
  const statusOf = async (requestId: string) => (await world.stack.runtime.getConfirmation(principal, requestId)).status;

  /** An elicitation answer that records what it was asked, and answers `accept` without deciding. */
  function recording(asked: ElicitRequestURLParams[], action: "accept" | "decline" | "cancel" = "accept") {
    return (params: ElicitRequestURLParams) => {
      asked.push(params);
      return { action };
    };
  }

  it("approve: the client is sent to the request's own page, the call waits, runs once, and says complete", async () => {
    const asked: ElicitRequestURLParams[] = [];
    const decided: string[] = [];
    const approve = userWho(world, "approve", decided);
    const client = await world.connect({ onUrlElicitation: (params) => (asked.push(params), approve(params)) });
    const completed: string[] = [];
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, async (notification) => {
      completed.push(notification.params.elicitationId);
    });
    const before = created();
    const result = await client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Approved over MCP" } });

    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ title: "Approved over MCP" });
    expect(created()).toBe(before + 1);
    const [params] = asked;
    expect(params?.url).toBe(`${world.stack.url}/confirm/${params?.elicitationId}`);
    expect(params?.message).not.toMatch(/https?:/);
    expect(decided).toEqual([params?.elicitationId]);
    expect(completed).toEqual([params?.elicitationId]);
    expect(await statusOf(params!.elicitationId)).toBe("approved");
  });

  it("deny on the page: a tool error that says nothing ran, and nothing ran", async () => {
    const client = await world.connect({ onUrlElicitation: userWho(world, "deny") });
    const before = created();
    const result = await client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Denied over MCP" } });
    expect(result).toMatchObject({ isError: true, _meta: { "toolpact/code": "CONFIRMATION_DENIED" } });
    expect(textOf(result)).toMatch(/the user denied com\.test\.notes:create-note@1 on the confirmation page; nothing ran/);
    expect(created()).toBe(before);
  });

  it("the client declines to open the page: the request is withdrawn and nothing runs", async () => {
    const asked: ElicitRequestURLParams[] = [];
    const client = await world.connect({ onUrlElicitation: recording(asked, "decline") });
    const before = created();
    const result = await client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Declined" } });
    expect(result).toMatchObject({ isError: true, _meta: { "toolpact/code": "CONFIRMATION_DENIED" } });
    expect(textOf(result)).toContain("the user declined to open the confirmation page");
    expect(await statusOf(asked[0]!.elicitationId)).toBe("cancelled");
    expect(created()).toBe(before);
  });

  it("a client that fails to show the page: the request is withdrawn and nothing runs", async () => {
    const client = await world.connect({
      onUrlElicitation: () => {
        throw new Error("no browser on this machine");
      },
    });
    const before = created();
    const result = await client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Nowhere to show it" } });
    expect(result).toMatchObject({ isError: true, _meta: { "toolpact/code": "CONFIRMATION_DENIED" } });
    expect(textOf(result)).toMatch(/^CONFIRMATION_DENIED: the client could not show the confirmation page \(.*no browser on this machine.*\)/);
    const requestId = (result._meta as Record<string, string>)["toolpact/requestId"]!;
    expect(await statusOf(requestId)).toBe("cancelled");
    expect(created()).toBe(before);
  });

  it("notifications/cancelled withdraws the request: a later approval finds nothing to approve", async () => {
    const asked: ElicitRequestURLParams[] = [];
    const client = await world.connect({ onUrlElicitation: recording(asked) });
    const stop = new AbortController();
    const before = created();
    const calling = client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Cancelled" } }, undefined, { signal: stop.signal });
    await expect.poll(() => asked.length).toBe(1);
    stop.abort("the agent moved on");
    await expect(calling).rejects.toThrow();
    const requestId = asked[0]!.elicitationId;
    await expect.poll(() => statusOf(requestId)).toBe("cancelled");
    await expect(world.decide(requestId, "approve")).rejects.toThrow();
    expect(created()).toBe(before);
  });

  it("a client that hangs up mid-wait withdraws its request", async () => {
    const asked: ElicitRequestURLParams[] = [];
    const client = await world.connect({ onUrlElicitation: recording(asked) });
    const calling = client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Hung up" } }).catch((error: unknown) => error);
    await expect.poll(() => asked.length).toBe(1);
    await client.close();
    await calling;
    await expect.poll(() => statusOf(asked[0]!.elicitationId)).toBe("cancelled");
  });

  it("reports progress while it waits, when the client asked for it", async () => {
    const client = await world.connect({
      onUrlElicitation: (params) => {
        setTimeout(() => void world.decide(params.elicitationId, "approve"), 700);
        return { action: "accept" };
      },
    });
    const progress: Progress[] = [];
    const result = await client.callTool({ name: "com-test-notes_create_note", arguments: { title: "With progress" } }, undefined, {
      onprogress: (update) => progress.push(update),
      resetTimeoutOnProgress: true,
    });
    expect(result.isError).toBeUndefined();
    expect(progress.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
    expect(progress[0]!.message).toBe("waiting for the user to approve on the confirmation page");
  });

  it("expiry: the request runs out while the user does nothing, and nothing runs", async () => {
    const asked: ElicitRequestURLParams[] = [];
    const client = await world.connect({ onUrlElicitation: recording(asked) });
    const before = created();
    const calling = client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Expired" } });
    await expect.poll(() => asked.length).toBe(1);
    clockOffset = 10 * 60_000;
    try {
      const result = await calling;
      expect(result).toMatchObject({ isError: true, _meta: { "toolpact/code": "CONFIRMATION_EXPIRED", "toolpact/requestId": asked[0]!.elicitationId } });
      expect(textOf(result)).toContain("expired before the user decided; nothing ran");
    } finally {
      clockOffset = 0;
    }
    expect(created()).toBe(before);
  });

  it("a session client without URL elicitation gets the URL-elicitation-required error; the request stays open", async () => {
    const client = await world.connect();
    const error = await client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Needs a link" } }).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(UrlElicitationRequiredError);
    const [elicitation] = (error as UrlElicitationRequiredError).elicitations;
    expect(elicitation).toMatchObject({ mode: "url", url: `${world.stack.url}/confirm/${elicitation?.elicitationId}` });
    // The SDK prefixes the code once (the bridge sends the message without the prefix its own McpError adds).
    expect((error as UrlElicitationRequiredError).message).toBe(
      `MCP error -32042: com.test.notes:create-note@1 needs the user's approval: open ${elicitation!.url}, approve, then make the same call again`,
    );
    expect(await statusOf(elicitation!.elicitationId)).toBe("pending");
  });

  describe("an agent cannot approve its own request", () => {
    async function pendingRequest(): Promise<string> {
      const asked: ElicitRequestURLParams[] = [];
      const client = await world.connect({ onUrlElicitation: recording(asked) });
      void client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Self-approval" } }).catch(() => {});
      await expect.poll(() => asked.length).toBe(1);
      return asked[0]!.elicitationId;
    }

    it("through MCP: no tool and no method decides a confirmation", async () => {
      const client = await world.connect();
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names.filter((name) => /confirm|approv|decid/i.test(name))).toEqual([]);
      const requestId = await pendingRequest();
      for (const method of ["confirmations/approve", "confirmations.approve", "elicitation/complete"]) {
        await expect(client.request({ method, params: { requestId } } as never, {} as never)).rejects.toMatchObject({ code: -32601 });
      }
      expect(await statusOf(requestId)).toBe("pending");
    });

    it("through HTTP: approve refuses the plugin key and actor token, even next to a person's session and CSRF token", async () => {
      const requestId = await pendingRequest();
      const agent = await world.headers();
      const trpc = await mutate(world.stack.url, "confirmations.approve", { requestId }, agent);
      expect(trpc.status).toBe(403);
      expect(trpc.body.error?.message).toContain("not for plugins");

      // Even a person's valid session and CSRF token do not help a request that carries the agent's credentials.
      const session = await signIn(world.stack.url, world.secrets.actorSecret);
      const page = await fetchPage(world.stack.url, requestId, session);
      const form = await postDecision(world.stack.url, requestId, "approve", { session, csrf: page.csrf!, headers: agent });
      expect(form.status).toBe(403);
      const withSession = { ...agent, cookie: session.cookie, [CSRF_HEADER]: page.csrf! };
      const trpcWithSession = await mutate(world.stack.url, "confirmations.approve", { requestId }, withSession);
      expect(trpcWithSession.status).toBe(403);
      expect(trpcWithSession.body.error?.data.toolpactCode).toBe("PERMISSION_DENIED");
      expect(await statusOf(requestId)).toBe("pending");
    });
  });
});
