// The provider plugin of the benchmarks: the same lookup every compared server does.
import { lookupItem } from "../../lib/work.mjs";

/** Provides bench.items' tools. */
export function activate(sdk) {
  sdk.tools.provide("get-item", { execute: (input) => lookupItem(input.id) });
  sdk.tools.provide("put-item", {
    preview: (input) => ({ summary: `Put item ${input.id}`, details: { id: input.id } }),
    execute: (input) => lookupItem(input.id),
  });
  sdk.tools.provide("touch-item", { execute: (input) => lookupItem(input.id) });
}
