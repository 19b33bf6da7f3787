import {
  compareUpstreamTools,
  describeToolDrift,
  type LiveTool,
  type Manifest,
  type ToolCallContext,
  type ToolDeclaration,
  type ToolHandler,
} from "@toolpact/contract";
import { ProviderBusy, ProviderRefusal, type Logger, type PluginSdk } from "@toolpact/runtime";
import { outputOfUpstream } from "./upstream-result.js";
import type { UpstreamConnection, UpstreamSupervisor } from "./upstream-supervisor.js";

/** Where a declared tool stands against the live server: matching, or drifted (refused, with why). Unchecked until the first connection. */
type ToolStanding = { readonly kind: "ready" } | { readonly kind: "drifted"; readonly why: string };

/**
 * The tools of a plugin whose manifest names an upstream MCP server. Each (re)connection, and each
 * change the server announces, checks the live tool list against the manifest (`check`): a tool missing upstream or whose schema changed is
 * refused until the manifest is updated (fail closed), with the JSON Pointers that changed in the log
 * and in the refusal; tools the server has and the manifest does not are ignored, with a log line.
 */
export class UpstreamTools {
  readonly #manifest: Manifest;
  readonly #supervisor: UpstreamSupervisor;
  readonly #logger: Logger;
  readonly #standing = new Map<string, ToolStanding>();
  #serverName: string | undefined;

  constructor(manifest: Manifest, supervisor: UpstreamSupervisor, logger: Logger) {
    this.#manifest = manifest;
    this.#supervisor = supervisor;
    this.#logger = logger;
  }

  /** Checks a connection's live tool list against the manifest. */
  connected(connection: UpstreamConnection): void {
    this.#serverName = connection.serverName;
    this.check(connection.tools);
  }

  /** Checks the server's live tool list against the manifest; what it finds holds until the next check. */
  check(live: readonly LiveTool[]): void {
    const pluginId = this.#manifest.id;
    const { drifted, undeclared } = compareUpstreamTools(this.#manifest.tools, live);
    for (const tool of this.#manifest.tools) this.#standing.set(keyOf(tool), { kind: "ready" });
    for (const drift of drifted) {
      const why = describeToolDrift(drift);
      this.#standing.set(drift.tool, { kind: "drifted", why });
      this.#logger.error({
        event: "upstream_tool_drift",
        pluginId,
        tool: drift.tool,
        drift: why,
        effect: "this tool is refused until plugin.json matches the server (toolpact import mcp writes it again)",
      });
    }
    if (undeclared.length > 0) this.#logger.info({ event: "upstream_tools_ignored", pluginId, tools: undeclared, reason: "not declared in plugin.json" });
  }

  /** Provides every declared tool through the plugin's SDK, so each call runs the whole pipeline. */
  provideAll(sdk: PluginSdk): void {
    const versions = new Map<string, number>();
    for (const tool of this.#manifest.tools) versions.set(tool.name, (versions.get(tool.name) ?? 0) + 1);
    for (const tool of this.#manifest.tools) {
      sdk.tools.provide((versions.get(tool.name) ?? 0) > 1 ? keyOf(tool) : tool.name, this.#handlerOf(tool));
    }
  }

  #handlerOf(tool: ToolDeclaration): ToolHandler<Record<string, unknown>, unknown> {
    const upstreamName = tool.upstreamName ?? tool.name;
    return {
      // Before any operation exists: a drifted tool, or a server at capacity, refuses here and nothing runs.
      authorize: (_input, ctx) => {
        this.#refuseDrifted(tool);
        if (ctx.phase === "execute" && this.#supervisor.full) {
          throw new ProviderBusy(`the MCP server of plugin "${this.#manifest.id}" is at its maxInFlight`, 1000);
        }
        return true;
      },
      preview: (input) => ({
        summary:
          `Run the tool ${JSON.stringify(upstreamName)} of the MCP server ${JSON.stringify(this.#serverName ?? this.#manifest.id)} ` +
          `(plugin ${this.#manifest.id}) with exactly the arguments shown.`,
        details: { upstreamTool: upstreamName, arguments: input },
      }),
      execute: async (input, ctx) => {
        this.#refuseDrifted(tool);
        const result = await this.#supervisor.call(upstreamName, input, { timeoutMs: tool.timeoutMs, signal: ctx.signal, meta: traceMetaOf(ctx) });
        return outputOfUpstream(tool, result);
      },
    };
  }

  #refuseDrifted(tool: ToolDeclaration): void {
    const standing = this.#standing.get(keyOf(tool));
    if (standing?.kind === "drifted") {
      throw new ProviderRefusal(`the MCP server no longer matches plugin.json, so this tool is refused: ${standing.why}; update plugin.json and restart`);
    }
  }
}

function keyOf(tool: ToolDeclaration): string {
  return `${tool.name}@${tool.version}`;
}

/** The W3C trace context, as MCP carries it in a request's `_meta`. */
function traceMetaOf(ctx: ToolCallContext): Record<string, string> | undefined {
  if (ctx.traceparent === undefined) return undefined;
  return ctx.tracestate === undefined ? { traceparent: ctx.traceparent } : { traceparent: ctx.traceparent, tracestate: ctx.tracestate };
}
