/**
 * A toolpact stack for MCP tests: the integration test world (SQLite file, runtime, HTTP server on
 * 127.0.0.1), confirmations in platform mode, and MCP clients of the official SDK connected to `/mcp`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, type ElicitRequestURLParams, type ElicitResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { ASSISTANT_ID } from "../../integration/support/plugins.js";
import { signIn, fetchPage, postDecision } from "../../integration/support/confirm-page.js";
import {
  callerHeadersOf,
  configureWorld,
  makeSecrets,
  startStack,
  type Stack,
  type StackOptions,
  type Tenant,
  type WorldKeys,
} from "../../integration/support/stack.js";
import type { ActorTokenSpec } from "../../integration/support/tokens.js";

/** Reads allowed; writes and external effects confirmed by the user on toolpact's page; no trusted UI. */
export const PLATFORM_POLICY = {
  rules: [
    { tools: "com.test.*", effects: ["read"], decision: "allow" },
    { tools: "com.test.*", effects: ["write", "external"], decision: "confirm", mode: "platform" },
  ],
} as const;

/** A running MCP test world. */
export interface McpWorld {
  readonly stack: Stack;
  readonly keys: WorldKeys;
  readonly secrets: ReturnType<typeof makeSecrets>;
  /** `/mcp` of the stack. */
  readonly mcpUrl: URL;
  /** Request headers of a caller (default the assistant) acting for an actor (default user-1) in a tenant (default t1). */
  headers(caller?: string, spec?: ActorTokenSpec, tenant?: Tenant): Promise<Record<string, string>>;
  /** An SDK client connected over Streamable HTTP, acting as `caller` for `spec`'s actor. */
  connect(options?: ConnectOptions): Promise<Client>;
  /** Signs `userId` (default user-1) in to the confirmation page and approves or denies the request. */
  decide(requestId: string, decision: "approve" | "deny", userId?: string): Promise<void>;
  close(): Promise<void>;
}

/** How a test client connects. */
export interface ConnectOptions {
  readonly caller?: string;
  readonly actor?: ActorTokenSpec;
  readonly tenant?: Tenant;
  /** Declares URL elicitation and answers each `elicitation/create` with this. */
  readonly onUrlElicitation?: (params: ElicitRequestURLParams) => ElicitResult | Promise<ElicitResult>;
}

/** Starts the world: stack, tenants, platform-mode policy in t1. */
export async function startMcpWorld(options: Partial<Omit<StackOptions, "dbFile" | "secrets">> = {}): Promise<McpWorld> {
  const dir = mkdtempSync(path.join(tmpdir(), "toolpact-mcp-"));
  const secrets = makeSecrets();
  const stack = await startStack({ publicUrl: "self", ...options, dbFile: path.join(dir, "toolpact.db"), secrets });
  const keys = await configureWorld(stack);
  await stack.admin("setPolicy", { tenantId: "t1", policy: PLATFORM_POLICY });
  const headers = callerHeadersOf(keys, secrets.actorSecret);
  const mcpUrl = new URL(`${stack.url}/mcp`);
  const clients: Client[] = [];
  return {
    stack,
    keys,
    secrets,
    mcpUrl,
    headers: (caller = ASSISTANT_ID, spec = {}, tenant = "t1") => headers(caller, spec, tenant),
    async connect(connect = {}) {
      const client = new Client(
        { name: "test-agent", version: "1.0.0" },
        { capabilities: connect.onUrlElicitation === undefined ? {} : { elicitation: { url: {} } } },
      );
      const answer = connect.onUrlElicitation;
      if (answer !== undefined) {
        client.setRequestHandler(ElicitRequestSchema, async (request) => {
          if (request.params.mode !== "url") throw new Error(`expected a URL elicitation, got ${JSON.stringify(request.params)}`);
          return answer(request.params);
        });
      }
      const transport = new StreamableHTTPClientTransport(mcpUrl, {
        requestInit: { headers: await headers(connect.caller ?? ASSISTANT_ID, connect.actor ?? {}, connect.tenant ?? "t1") },
      });
      await client.connect(transport);
      clients.push(client);
      return client;
    },
    async decide(requestId, decision, userId = "user-1") {
      const session = await signIn(stack.url, secrets.actorSecret, { sub: userId });
      const page = await fetchPage(stack.url, requestId, session);
      if (page.csrf === undefined) throw new Error(`the confirmation page shows no decision form: HTTP ${page.status}`);
      const decided = await postDecision(stack.url, requestId, decision, { session, csrf: page.csrf });
      if (decided.status !== 200) throw new Error(`${decision} answered HTTP ${decided.status}: ${decided.html.slice(0, 300)}`);
    },
    async close() {
      await Promise.all(clients.map((client) => client.close().catch(() => {})));
      await stack.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * An elicitation answer that plays the user: accepts, then (a moment later, as a person would) approves
 * or denies the request on the confirmation page. `decided` collects each request id once decided.
 */
export function userWho(world: McpWorld, decision: "approve" | "deny", decided: string[] = []) {
  return (params: ElicitRequestURLParams): ElicitResult => {
    setTimeout(() => {
      world.decide(params.elicitationId, decision).then(
        () => decided.push(params.elicitationId),
        (error: unknown) => decided.push(`failed: ${(error as Error).message}`),
      );
    }, 50);
    return { action: "accept" };
  };
}

/** Every tool of a listing, page by page. */
export async function listAll(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/** The text of a tool result's first content block. */
export function textOf(result: { content?: unknown }): string {
  const [first] = (result.content ?? []) as { type: string; text?: string }[];
  if (first?.type !== "text" || first.text === undefined) throw new Error(`expected text content, got ${JSON.stringify(result.content)}`);
  return first.text;
}
