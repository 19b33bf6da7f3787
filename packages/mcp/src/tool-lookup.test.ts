/**
 * Resolving a `tools/call`'s name one tool at a time must answer what the whole listing answers, call after
 * call, while the tenant's config and the host's plugins change: through `/mcp` (2026-07-28, no session)
 * over a test host's real runtime and store, and name by name against `createToolDirectory`.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseManifest } from "@toolpact/contract";
import { createTestHost, type TestHost } from "@toolpact/runtime/testing";
import { silentLogger, type Principal, type TenantPolicy } from "@toolpact/runtime";
import { createMcpHttpHandler, type McpHttpHandler } from "./http-handler.js";
import { createRuntimeBackend, type ToolBackend } from "./tool-backend.js";
import { TASKS_EXTENSION } from "./tool-tasks.js";
import { createToolLookup } from "./tool-lookup.js";
import { createToolDirectory, mcpToolName, toolRefOfName } from "./tool-names.js";

const NOTES = "com.example.notes";
const LATE = "com.example.late";
const CALLER = "com.example.agent";
/** Escaped id and tool name together pass MCP's 128 characters: its names are cut and hashed. */
const LONG = `com.example.${"long-".repeat(20)}id`;
const LONG_TOOL = `${"very-".repeat(12)}long`;
const MODERN = "2026-07-28";

const object = { type: "object", additionalProperties: true };
const provider = (id: string, tools: readonly { name: string; effect: string; version?: number; requiresConfirmation?: boolean }[]) => ({
  manifest: { id, version: "1.0.0", permissions: ["tools:provide"], tools: tools.map((tool) => ({ ...tool, inputSchema: object })) },
  activate: (sdk: import("@toolpact/runtime").PluginSdk) => {
    for (const tool of tools) {
      const spec = tool.version === undefined ? tool.name : `${tool.name}@${tool.version}`;
      sdk.tools.provide(spec, { execute: () => ({ tool: spec }) });
    }
  },
});

/** Reads allowed, writes confirmed on toolpact's page. */
const POLICY: TenantPolicy = {
  rules: [
    { tools: "*", effects: ["read"], decision: "allow" },
    { tools: "*", effects: ["write", "external"], decision: "confirm", mode: "platform" },
  ],
};

interface Answer {
  readonly result?: { readonly isError?: boolean; readonly structuredContent?: unknown; readonly resultType?: string };
  readonly error?: { readonly code: number; readonly message: string };
}

describe("resolving a tools/call one tool at a time", () => {
  let host: TestHost;
  let principal: Principal;
  let mcp: McpHttpHandler;

  beforeAll(async () => {
    host = await createTestHost({
      plugins: [
        provider(NOTES, [
          { name: "list-notes", effect: "read" },
          // Confirmed only where the policy says so.
          { name: "create-note", effect: "write", requiresConfirmation: false },
          { name: "versioned", effect: "read", version: 1 },
          { name: "versioned", effect: "read", version: 2 },
        ]),
        provider(LONG, [{ name: LONG_TOOL, effect: "read" }]),
        { manifest: { id: CALLER, version: "1.0.0", permissions: ["tools:call"] } },
      ],
      policy: POLICY,
    });
    principal = await host.runtime.authenticate({ pluginKey: await host.pluginKey(CALLER), actorToken: await host.actorToken() });
    mcp = createMcpHttpHandler({ runtime: host.runtime, authenticate: async () => principal, maxBodyBytes: 65_536, sessions: false, logger: silentLogger });
  });
  afterAll(async () => {
    await mcp?.close();
    await host?.close();
  });

  /** One 2026-07-28 `tools/call` through `/mcp`, as a client that declares `capabilities` sends it. */
  const call = async (name: string, capabilities: object = {}): Promise<Answer> => {
    const body = {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name,
        arguments: {},
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientInfo": { name: "lookup-test", version: "1.0.0" },
          "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
      },
    };
    const headers = {
      host: "127.0.0.1",
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": name,
    };
    const response = await mcp(new Request("http://127.0.0.1/mcp", { method: "POST", headers, body: JSON.stringify(body) }));
    const text = await response.text();
    return JSON.parse(text.startsWith("{") ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? "{}")) as Answer;
  };
  const ran = async (name: string) => (await call(name)).result?.structuredContent;
  const unknownError = (name: string, rest: string) => ({
    code: -32602,
    message: `unknown tool "${name}": no tool by that name is offered to this caller and user${rest}`,
  });
  const setPolicy = (policy: TenantPolicy) => host.runtime.admin.setPolicy(host.tenantId, policy);

  it("runs a tool by its name without listing the catalogue", async () => {
    const listed = vi.spyOn(host.runtime, "listTools");
    try {
      expect(await ran("com-example-notes_list_notes")).toEqual({ tool: "list-notes" });
      expect(await ran("com-example-notes_versioned")).toEqual({ tool: "versioned@2" });
      expect(await ran("com-example-notes_versioned-v1")).toEqual({ tool: "versioned@1" });
      expect(await ran("com-example-notes_versioned-v2")).toEqual({ tool: "versioned@2" });
      expect(listed).not.toHaveBeenCalled();
    } finally {
      listed.mockRestore();
    }
  });

  it("runs a tool whose name is cut (found in the listing: a cut name does not decode)", async () => {
    const [name] = createToolDirectory(await host.runtime.listTools(principal)).names.filter((listed) => listed.includes("-h"));
    expect(name).toHaveLength(128);
    expect(toolRefOfName(name!)).toBeUndefined();
    expect(await ran(name!)).toEqual({ tool: LONG_TOOL });
  });

  it("refuses a tool on the call after its provider was disabled, and runs it again once enabled", async () => {
    expect(await ran("com-example-notes_list_notes")).toEqual({ tool: "list-notes" });
    await host.runtime.admin.setPluginEnabled(host.tenantId, NOTES, false);
    try {
      expect((await call("com-example-notes_list_notes")).error).toEqual(unknownError("com-example-notes_list_notes", ": list them with tools/list"));
    } finally {
      await host.runtime.admin.setPluginEnabled(host.tenantId, NOTES, true);
    }
    expect(await ran("com-example-notes_list_notes")).toEqual({ tool: "list-notes" });
  });

  it("refuses a tool on the call after the policy denied it; a denied highest version hands the plain name to the next", async () => {
    expect(await ran("com-example-notes_versioned")).toEqual({ tool: "versioned@2" });
    await setPolicy({ rules: [{ tools: `${NOTES}:versioned@2`, decision: "deny" }, ...POLICY.rules] });
    try {
      expect((await call("com-example-notes_versioned-v2")).error).toEqual(
        unknownError("com-example-notes_versioned-v2", '; did you mean "com-example-notes_versioned"?'),
      );
      expect(await ran("com-example-notes_versioned")).toEqual({ tool: "versioned@1" });
      expect(await ran("com-example-notes_versioned-v1")).toEqual({ tool: "versioned@1" });
    } finally {
      await setPolicy(POLICY);
    }
    expect(await ran("com-example-notes_versioned")).toEqual({ tool: "versioned@2" });
  });

  it("takes whether a call needs confirmation from the config of this call, in both directions", async () => {
    // Confirmed: a client that can show no URL gets nothing run.
    const confirmed = await call("com-example-notes_create_note");
    expect(confirmed.result?.isError).toBe(true);
    await setPolicy({ rules: [{ tools: "*", decision: "allow" }] });
    try {
      expect(await ran("com-example-notes_create_note")).toEqual({ tool: "create-note" });
      expect(await ran("com-example-notes_list_notes")).toEqual({ tool: "list-notes" });
      // And back: the write is confirmed again on the very next call, the read is not.
      await setPolicy({ rules: [{ tools: "*", decision: "confirm", mode: "platform" }] });
      expect(await call("com-example-notes_create_note")).toEqual(confirmed);
      expect((await call("com-example-notes_list_notes")).result?.isError).toBe(true);
    } finally {
      await setPolicy(POLICY);
    }
  });

  it("refuses a tool to a tenant that never installed its provider", async () => {
    const other = "other-tenant";
    await host.runtime.admin.installPlugin(other, CALLER);
    await host.runtime.admin.setPolicy(other, POLICY);
    const stranger: Principal = Object.freeze({ ...principal, tenantId: other });
    const lookup = createToolLookup(createRuntimeBackend(host.runtime, stranger));
    expect(await lookup.find("com-example-notes_list_notes")).toBeUndefined();
    expect((await lookup.directory()).names).toEqual([]);
  });

  it("runs a tool once its handler is provided, and a provider registered and installed after the first call", async () => {
    const late = parseManifest(JSON.stringify(provider(LATE, [{ name: "arrive", effect: "read" }]).manifest), "late plugin");
    if (!late.ok) throw new Error(`the late plugin's manifest is invalid: ${JSON.stringify(late.diagnostics)}`);
    host.runtime.registerPlugin(late.manifest);
    expect((await call("com-example-late_arrive")).error?.message).toMatch(/^unknown tool "com-example-late_arrive"/);
    await host.runtime.admin.installPlugin(host.tenantId, LATE);
    // Installed, but no handler yet: not offered.
    expect((await call("com-example-late_arrive")).error?.message).toMatch(/^unknown tool "com-example-late_arrive"/);
    host.runtime.sdkFor(LATE).tools.provide("arrive", { execute: () => ({ tool: "arrive" }) });
    expect(await ran("com-example-late_arrive")).toEqual({ tool: "arrive" });
  });

  it("answers an unknown name with the closest listed names, as before", async () => {
    expect((await call("com-example-notes_list_note")).error).toEqual(
      unknownError("com-example-notes_list_note", '; did you mean "com-example-notes_list_notes"?'),
    );
    expect((await call("notes_create_note")).error?.message).toMatch(/; did you mean "com-example-notes_create_note"\?$/);
    expect((await call("com.example.notes:versioned@1")).error?.message).toMatch(
      /; did you mean "com-example-notes_versioned-v1", "com-example-notes_versioned"\?$/,
    );
    expect((await call("com-example-notes_versioned-v3")).error?.message).toMatch(/^unknown tool "com-example-notes_versioned-v3".*; did you mean /);
    expect((await call("zzz")).error).toEqual(unknownError("zzz", ": list them with tools/list"));
  });

  it("starts a task for a call that wants one, resolved the same way", async () => {
    const answer = await call("com-example-notes_list_notes", { extensions: { [TASKS_EXTENSION]: {} } });
    expect(answer.result?.resultType).toBe("complete"); // a read answers at once
    await setPolicy({ rules: [{ tools: "*", decision: "allow" }] });
    try {
      const task = await call("com-example-notes_create_note", { extensions: { [TASKS_EXTENSION]: {} } });
      expect(task.result?.resultType).toBe("task");
    } finally {
      await setPolicy(POLICY);
    }
  });

  it("finds for every name what the whole listing resolves it to, with or without a one-tool lookup", async () => {
    await setPolicy({ rules: [{ tools: `${NOTES}:versioned@2`, decision: "deny" }, ...POLICY.rules] });
    try {
      const listing = await host.runtime.listTools(principal);
      const directory = createToolDirectory(listing);
      const runtimeBackend = createRuntimeBackend(host.runtime, principal);
      const { findTool: _findTool, ...listingOnly } = runtimeBackend;
      const names = [
        ...directory.names,
        ...directory.names.map((name) => `${name}-v1`),
        ...directory.names.map((name) => `${name}-v2`),
        ...directory.names.map((name) => name.toUpperCase()),
        ...directory.names.map((name) => name.slice(0, -1)),
        mcpToolName(NOTES, "unhandled"),
        "com-example--notes_list_notes",
        "com-example-notes_list-notes",
        "com-example-notes_versioned-v01",
        "_list_notes",
        "com-example-notes_",
        "",
      ];
      for (const backend of [runtimeBackend, listingOnly as ToolBackend]) {
        const lookup = createToolLookup(backend);
        for (const name of names) expect(await lookup.find(name), name).toEqual(directory.resolve(name));
      }
    } finally {
      await setPolicy(POLICY);
    }
  });
});
