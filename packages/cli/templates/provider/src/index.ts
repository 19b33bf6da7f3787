import type { PluginSdk } from "@toolpact/runtime";
import { define{{Alias}}Provider } from "./generated/index.js";

/** Each user's list, per tenant. A real plugin keeps its own table, keyed the same way. */
const lists = new Map<string, string[]>();
const listOf = (ctx: { readonly tenantId: string; readonly actor: { readonly userId: string } }) => `${ctx.tenantId}/${ctx.actor.userId}`;

/** The host calls this once when it loads the plugin. */
export function activate(sdk: PluginSdk): void {
  sdk.tools.provideAll(
    define{{Alias}}Provider({
      addItem: {
        preview: (input) => ({ summary: `Add "${input.text}" to your list` }),
        execute: (input, ctx) => {
          lists.set(listOf(ctx), [...(lists.get(listOf(ctx)) ?? []), input.text]);
          return { id: ctx.operationId, targetId: ctx.operationId }; // targetId: named in the activity log
        },
      },
      listItems: {
        execute: (_input, ctx) => ({ items: lists.get(listOf(ctx)) ?? [] }),
      },
    }),
  );
}
