/**
 * The demo's MCP leg: an AI agent reaches the same tools through toolpact's MCP bridge (`/mcp`) with the
 * official MCP SDK client (v2), speaking the 2026-07-28 revision: no initialize, no session. It lists the
 * tools, calls a read tool, and calls a confirmed one: the bridge answers `input_required` with one URL
 * input request (toolpact's confirmation page) and a `requestState`; once the user approved there, the
 * client retries with the state and the call runs once.
 */
import { Client, StreamableHTTPClientTransport, type CallToolResult, type Tool } from "@modelcontextprotocol/client";
import type { Narrator } from "./narrator.js";
import { SessionCheckError, type AssistantSessionOptions } from "./session.js";

/** The MCP names the agent expects the bridge to offer (`<provider id, . as ->_<tool, _ for ->`). */
export const EXPECTED_MCP_TOOLS = [
  "com-example-mailer_send_summary",
  "com-example-notes_archive_record",
  "com-example-notes_create_record",
  "com-example-notes_search_records",
] as const;

/** What the agent did. */
export interface AgentSessionResult {
  readonly messageId: string;
  readonly operationId: string;
}

/**
 * Runs the MCP leg with the assistant's credentials (the agent is the assistant plugin, acting for the
 * user); throws SessionCheckError at the first step that does not behave as expected.
 */
export async function runAgentOverMcp(options: AssistantSessionOptions): Promise<AgentSessionResult> {
  const { narrator: say, user } = options;
  say.heading(`8. An AI agent over MCP  (the official MCP SDK client at ${options.url}/mcp, revision 2026-07-28)`);
  const client = new Client(
    { name: "demo-agent", version: "1.0.0" },
    { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  let approval: Promise<void> | undefined;
  // At 2026-07-28 the SDK client calls this for each URL input request of an `input_required` answer, then
  // retries the call with the bridge's requestState once it returns: so it returns when the user decided.
  client.setRequestHandler("elicitation/create", async (request) => {
    const params = request.params as { mode?: string; url?: string; message: string };
    if (params.mode !== "url" || params.url === undefined) {
      throw new SessionCheckError(`the bridge should ask for URL input; it asked ${JSON.stringify(request.params)}`);
    }
    say.say("elicitation", `the agent's client shows ${user.id} the link toolpact sent (input_required, one URL input request):\n${params.url}`);
    approval = options.userApproves(params.url, say);
    await approval;
    say.say("retry", "the client retries the same call with the bridge's requestState (signed, bound to the call; no token in it)");
    return { action: "accept" };
  });
  const transport = new StreamableHTTPClientTransport(new URL(`${options.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${options.pluginKey}`, "x-toolpact-actor": options.actorToken } },
  });
  await client.connect(transport);
  try {
    say.say(
      "connected",
      `as the assistant plugin (its key) for ${user.id} (her actor token), like any caller; protocol ${client.getProtocolEra() === "modern" ? "2026-07-28, no session" : "2025-11-25"}`,
    );

    const { tools } = await client.listTools();
    say.table(
      ["MCP tool", "hints", "toolpact tool"],
      tools.map((tool) => [tool.name, hintsOf(tool.annotations), String(tool._meta?.["toolpact/tool"] ?? "")]),
    );
    const names = tools.map((tool) => tool.name).sort();
    check(
      names.length === EXPECTED_MCP_TOOLS.length && names.every((name, index) => name === EXPECTED_MCP_TOOLS[index]),
      `tools/list should offer ${EXPECTED_MCP_TOOLS.join(", ")}; it offered ${names.join(", ") || "nothing"}`,
    );

    const search = await client.callTool({ name: "com-example-notes_search_records", arguments: { query: "Q3" } });
    const found = (structured(search, "com-example-notes_search_records") as { records: { title: string }[] }).records;
    say.say("read", `com-example-notes_search_records "Q3": ${found.map((record) => `"${record.title}"`).join(", ") || "nothing"} (runs at once: a read tool)`);
    check(found.length === 1, `the agent should find the note the session created; it found ${found.length}`);

    const mail = { to: user.email, subject: "Summary, sent by the agent", body: "The Q3 plan is in your notes." };
    say.say("call", `com-example-mailer_send_summary to ${mail.to}: external, so the bridge answers input_required: ${user.id} approves on toolpact's page`);
    const sent = await client.callTool({ name: "com-example-mailer_send_summary", arguments: mail });
    check(approval !== undefined, "the bridge should have sent the user to the confirmation page before it ran");
    await approval;
    const { messageId } = structured(sent, "com-example-mailer_send_summary") as { messageId: string };
    const operationId = String(sent._meta?.["toolpact/operationId"] ?? "");
    say.say("ran", `once approved: operation ${operationId}, message ${messageId}; the agent never held a token`);
    return { messageId, operationId };
  } finally {
    await client.close();
  }
}

function structured(result: CallToolResult | Awaited<ReturnType<Client["callTool"]>>, tool: string): Record<string, unknown> {
  if (result.isError === true || typeof result.structuredContent !== "object" || result.structuredContent === null) {
    throw new SessionCheckError(`${tool} should have run; it answered ${JSON.stringify(result.content)}`);
  }
  return result.structuredContent as Record<string, unknown>;
}

function hintsOf(annotations: Tool["annotations"]): string {
  const hints = [annotations?.readOnlyHint && "read-only", annotations?.destructiveHint && "destructive", annotations?.openWorldHint && "open world"];
  return hints.filter(Boolean).join(", ");
}

function check(condition: boolean, failure: string): asserts condition {
  if (!condition) throw new SessionCheckError(failure);
}
