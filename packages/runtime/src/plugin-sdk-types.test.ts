/**
 * The SDK's types live in @toolpact/protocol (what @toolpact/client re-exports): a provider typed against
 * them, with no runtime installed, is what the runtime hands `activate`. Checked by tsc over the tests.
 */
import { expect, expectTypeOf, it } from "vitest";
import type * as protocol from "@toolpact/protocol";
import type * as runtime from "./index.js";
import { createTestHost } from "./testing/test-host.js";

it("names the same types as @toolpact/protocol", () => {
  expectTypeOf<runtime.PluginSdk>().toEqualTypeOf<protocol.PluginSdk>();
  expectTypeOf<runtime.PluginTools>().toEqualTypeOf<protocol.PluginTools>();
  expectTypeOf<runtime.ToolCaller>().toEqualTypeOf<protocol.ToolCaller>();
  expectTypeOf<runtime.ToolListing>().toEqualTypeOf<protocol.ToolListing>();
  expectTypeOf<runtime.GateHandler>().toEqualTypeOf<protocol.GateHandler>();
  expectTypeOf<runtime.HookHandler>().toEqualTypeOf<protocol.HookHandler>();
  expectTypeOf<runtime.GuardHandler>().toEqualTypeOf<protocol.GuardHandler>();
});

/** A provider module as an author writes it against @toolpact/protocol's (or @toolpact/client's) types alone. */
function activate(sdk: protocol.PluginSdk): void {
  sdk.tools.provide<{ text: string }, { text: string }>("echo", { execute: (input, ctx) => ({ text: `${input.text} from ${ctx.callerPluginId}` }) });
  // @ts-expect-error a handler needs execute
  void (() => sdk.tools.provide("echo", { preview: () => ({ summary: "" }) }));
}

it("runs a provider typed only with the protocol's SDK", async () => {
  const host = await createTestHost({
    plugins: [
      {
        manifest: {
          id: "com.example.echo",
          version: "1.0.0",
          permissions: ["tools:provide"],
          tools: [{ name: "echo", effect: "read", inputSchema: { type: "object" } }],
        },
        activate,
      },
    ],
  });
  try {
    const answer = await host.transport().execute({ providerId: "com.example.echo", tool: "echo" }, { text: "hi" });
    expect(answer.result).toEqual({ text: "hi from toolpact.test-caller" });
  } finally {
    await host.close();
  }
});
