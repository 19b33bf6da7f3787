/**
 * A client that cannot be asked (no URL elicitation, or no session) gets the URL-elicitation-required
 * error, the user approves on the page, and the client makes the same call again: that retry (same caller,
 * actor, tool and canonical input) runs the approved call exactly once; anything else does not use it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UrlElicitationRequiredError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startMcpWorld, type McpWorld } from "./support/mcp-world.js";

describe("retrying a call after approving it on the page (no URL elicitation)", () => {
  let world: McpWorld;

  beforeAll(async () => {
    world = await startMcpWorld({ mcp: { sessions: false } });
  });
  afterAll(async () => {
    await world?.close();
  });

  const created = () => world.stack.probe.invocations.get("create-note") ?? 0;

  /** Calls create-note; answers the tool result, or the request id the URL-elicitation-required error names. */
  async function call(client: Client, title: string): Promise<CallToolResult | { needsApproval: string }> {
    try {
      return (await client.callTool({ name: "com-test-notes_create_note", arguments: { title } })) as CallToolResult;
    } catch (error) {
      if (!(error instanceof UrlElicitationRequiredError)) throw error;
      return { needsApproval: error.elicitations[0]!.elicitationId };
    }
  }

  async function approvedCall(client: Client, title: string): Promise<string> {
    const first = await call(client, title);
    if (!("needsApproval" in first)) throw new Error(`expected the URL-elicitation-required error, got ${JSON.stringify(first)}`);
    await world.decide(first.needsApproval, "approve");
    return first.needsApproval;
  }

  it("runs the approved call on the first retry, and answers later retries with that same outcome", async () => {
    const client = await world.connect();
    const before = created();
    await approvedCall(client, "Approved, then retried");
    const retried = await call(client, "Approved, then retried");
    expect(retried).toMatchObject({ structuredContent: { title: "Approved, then retried" } });
    const again = await call(client, "Approved, then retried");
    expect(again).toEqual(retried);
    expect(created()).toBe(before + 1);
  });

  it("20 concurrent retries of one approved call make one effect, and all of them get its result", async () => {
    const client = await world.connect();
    const before = created();
    await approvedCall(client, "Twenty retries");
    const results = await Promise.all(Array.from({ length: 20 }, () => call(client, "Twenty retries")));
    const operations = new Set(results.map((result) => (result as CallToolResult)._meta?.["toolpact/operationId"]));
    expect(operations.size).toBe(1);
    expect([...operations][0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(created()).toBe(before + 1);
  });

  it("a retry before the user decided points at the same page again", async () => {
    const client = await world.connect();
    const first = await call(client, "Not decided yet");
    const second = await call(client, "Not decided yet");
    expect(second).toEqual(first);
  });

  it("a retry with a changed input does not use the approval: it needs one of its own, and nothing runs", async () => {
    const client = await world.connect();
    const before = created();
    const approved = await approvedCall(client, "Approved input");
    const changed = await call(client, "Changed input");
    expect(changed).toHaveProperty("needsApproval");
    expect((changed as { needsApproval: string }).needsApproval).not.toBe(approved);
    expect(created()).toBe(before);
  });

  it("the same call by another user does not use the approval", async () => {
    const approver = await world.connect();
    const other = await world.connect({ actor: { sub: "user-2" } });
    const before = created();
    const approved = await approvedCall(approver, "Someone else's approval");
    const theirs = await call(other, "Someone else's approval");
    expect(theirs).toHaveProperty("needsApproval");
    expect((theirs as { needsApproval: string }).needsApproval).not.toBe(approved);
    expect(created()).toBe(before);
  });
});
