/**
 * The demo's MCP leg: an AI agent reaches the same tools through toolpact's MCP bridge (`/mcp`) with the
 * official MCP SDK client. It lists the tools, calls a read tool, and calls a confirmed one: the bridge
 * sends the user to toolpact's confirmation page (URL elicitation) and runs the call once she approves.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
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
  say.heading(`8. An AI agent over MCP  (the official MCP SDK client at ${options.url}/mcp)`);
  const client = new Client({ name: "demo-agent", version: "1.0.0" }, { capabilities: { elicitation: { url: {} } } });
  let approval: Promise<void> | undefined;
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    if (request.params.mode !== "url") throw new SessionCheckError(`the bridge should ask by URL elicitation; it asked ${JSON.stringify(request.params)}`);
    say.say(
      "elicitation",
      `the agent's client shows ${user.id} the link toolpact sent (URL elicitation, id ${request.params.elicitationId}):\n${request.params.url}`,
    );
    approval = options.userApproves(request.params.url, say);
    return { action: "accept" };
  });
  const transport = new StreamableHTTPClientTransport(new URL(`${options.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${options.pluginKey}`, "x-toolpact-actor": options.actorToken } },
  });
  await client.connect(transport);
  try {
    say.say("connected", `as the assistant plugin (its key) for ${user.id} (her actor token), like any caller; session ${transport.sessionId ?? "none"}`);

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
    say.say("call", `com-example-mailer_send_summary to ${mail.to}: external, so it waits for ${user.id}'s approval on toolpact's page`);
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
