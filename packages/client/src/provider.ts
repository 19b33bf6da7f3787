import type { ProviderDefinition, ToolHandler } from "@toolpact/protocol";
import { ToolpactError } from "@toolpact/protocol";
import type { ToolDescriptor } from "./tool-client.js";

/**
 * A provider definition for `sdk.tools.provideAll` from handlers keyed like the generated
 * `<Alias>ProviderHandlers` (generated `define<Alias>Provider` calls this). Fails closed at once:
 * a key no declared tool has is CAPABILITY_UNDECLARED, a declared tool without an `execute` is
 * HANDLER_MISSING.
 */
export function defineProvider(providerId: string, tools: Readonly<Record<string, ToolDescriptor>>, handlers: object): ProviderDefinition {
  if (typeof handlers !== "object" || handlers === null) {
    throw new ToolpactError(
      "HANDLER_MISSING",
      `the handlers of ${providerId} must be an object keyed by tool method; got ${handlers === null ? "null" : typeof handlers}`,
    );
  }
  const given = handlers as Readonly<Record<string, unknown>>;
  const declared = Object.keys(tools);
  for (const key of Object.keys(given)) {
    if (!Object.hasOwn(tools, key)) {
      throw new ToolpactError(
        "CAPABILITY_UNDECLARED",
        `handler "${key}" is not a tool ${providerId} declares; its manifest declares: ${declared.join(", ")}. ` +
          "Declare the tool in plugin.json and regenerate, or remove the handler",
      );
    }
  }
  const entries = declared.map((key) => {
    const descriptor = tools[key]!;
    const handler = Object.hasOwn(given, key) ? given[key] : undefined;
    checkHandler(descriptor, key, handler);
    return Object.freeze({ name: descriptor.name, version: descriptor.version, handler });
  });
  return Object.freeze({ providerId, tools: Object.freeze(entries) });
}

function checkHandler(descriptor: ToolDescriptor, key: string, handler: unknown): asserts handler is ToolHandler {
  if (typeof handler !== "object" || handler === null || typeof (handler as { execute?: unknown }).execute !== "function") {
    throw new ToolpactError("HANDLER_MISSING", `${descriptor.fullName} has no handler: pass { execute(input, ctx) { ... } } under "${key}"`, {
      tool: descriptor.fullName,
    });
  }
  for (const optional of ["preview", "authorize"] as const) {
    const member = (handler as Record<string, unknown>)[optional];
    if (member !== undefined && typeof member !== "function") {
      throw new ToolpactError("HANDLER_MISSING", `the handler of ${descriptor.fullName} under "${key}" has a "${optional}" that is not a function`, {
        tool: descriptor.fullName,
      });
    }
  }
}
