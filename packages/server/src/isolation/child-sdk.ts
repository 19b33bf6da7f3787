/**
 * The SDK an isolated plugin's `activate(sdk)` receives in its child process: it records the tool
 * handlers the plugin provides, which the child then serves over MCP. An isolated plugin provides tools
 * only: gates, hooks and guards act inside the host's pipeline, and calling tools needs the host's
 * identity of the call, so those refuse with what to do instead (the host refuses such a manifest first).
 */
import {
  ToolpactError,
  type ActorBoundSdk,
  type PluginSdk,
  type PluginTools,
  type ProviderDefinition,
  type SeamProvider,
  type ToolHandler,
} from "@toolpact/contract";

/** A tool handler as the child keeps it: its functions read once, at `provide`. */
export interface RecordedHandler {
  readonly execute: NonNullable<ToolHandler["execute"]>;
  readonly preview: ToolHandler["preview"];
  readonly authorize: ToolHandler["authorize"];
  /** The object the functions are called on. */
  readonly self: object;
}

/** The child's SDK and what the plugin provided through it, by the name it gave (`"name"` or `"name@version"`). */
export interface ChildSdk {
  readonly sdk: PluginSdk;
  readonly provided: ReadonlyMap<string, RecordedHandler>;
}

/** Makes the SDK of an isolated plugin's child process. */
export function createChildSdk(pluginId: string): ChildSdk {
  const provided = new Map<string, RecordedHandler>();
  const record = (spec: string, handler: unknown): void => {
    if (typeof spec !== "string" || spec.length === 0 || spec.length > 128) {
      throw new ToolpactError("HANDLER_INVALID", `plugin "${pluginId}" provided a tool without a name: pass "name" or "name@version"`);
    }
    if (provided.has(spec)) throw new ToolpactError("HANDLER_INVALID", `plugin "${pluginId}" provided "${spec}" twice: each declared tool is provided once`);
    provided.set(spec, recordedHandler(pluginId, spec, handler));
  };
  const refuseCall = (): never => {
    throw new ToolpactError(
      "PERMISSION_DENIED",
      `plugin "${pluginId}" runs with "isolation": "process", where calling tools is not offered: ` +
        "call tools from a plugin that runs in the host's process, or over HTTP with a plugin key",
    );
  };
  const tools: PluginTools = Object.freeze({
    provide: (name: string, handler: ToolHandler<never, unknown>) => record(name, handler),
    provideAll: (definition: ProviderDefinition) => {
      if (definition?.providerId !== pluginId) {
        throw new ToolpactError(
          "CAPABILITY_UNDECLARED",
          `plugin "${pluginId}" cannot provide tools of "${String(definition?.providerId).slice(0, 128)}": a plugin provides only under its own id`,
        );
      }
      for (const entry of definition.tools) record(`${entry.name}@${entry.version}`, entry.handler);
    },
    list: async () => refuseCall(),
    preview: async () => refuseCall(),
    execute: async () => refuseCall(),
  }) as PluginTools;
  const seams = (kind: string): SeamProvider<never> =>
    Object.freeze({
      provide: () => {
        throw new ToolpactError(
          "CAPABILITY_UNDECLARED",
          `plugin "${pluginId}" runs with "isolation": "process", which provides tools only: ` +
            `move its ${kind}s to a plugin that runs in the host's process`,
        );
      },
    });
  const sdk: PluginSdk = Object.freeze({
    pluginId,
    tools,
    gates: seams("gate"),
    hooks: seams("hook"),
    guards: seams("guard"),
    withActor: (): ActorBoundSdk => refuseCall(),
  });
  return { sdk, provided };
}

/** Reads a handler's functions once (a getter that throws fails `provide`, as in the host). */
function recordedHandler(pluginId: string, spec: string, handler: unknown): RecordedHandler {
  if (typeof handler !== "object" || handler === null) {
    throw new ToolpactError("HANDLER_INVALID", `plugin "${pluginId}": the handler for "${spec}" must be an object with an execute(input, ctx) function`);
  }
  const { execute, preview, authorize } = handler as Record<string, unknown>;
  if (typeof execute !== "function") {
    throw new ToolpactError("HANDLER_INVALID", `plugin "${pluginId}": the handler for "${spec}" has no execute(input, ctx) function`);
  }
  for (const [name, value] of [
    ["preview", preview],
    ["authorize", authorize],
  ] as const) {
    if (value !== undefined && typeof value !== "function") {
      throw new ToolpactError("HANDLER_INVALID", `plugin "${pluginId}": the handler for "${spec}" has a ${name} that is not a function`);
    }
  }
  return {
    execute: execute as RecordedHandler["execute"],
    preview: preview as RecordedHandler["preview"],
    authorize: authorize as RecordedHandler["authorize"],
    self: handler,
  };
}
