import { afterEach, expect, it } from "vitest";
import { createTestHost } from "@toolpact/runtime/testing";
import { create{{ProviderAlias}}Client, define{{ProviderAlias}}Provider } from "./generated/index.js";
import { addAndList } from "./add-and-list.js";

let host: Awaited<ReturnType<typeof createTestHost>> | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

it("adds an item through the provider's contract, confirmed, and reads the list back", async () => {
  // A stand-in for the provider, typed by its manifest: the real pipeline checks every call against it.
  const items: string[] = [];
  host = await createTestHost({
    plugins: [
      {
        manifest: "{{providerManifest}}",
        activate: (sdk) =>
          sdk.tools.provideAll(
            define{{ProviderAlias}}Provider({
              addItem: {
                preview: (input) => ({ summary: `Add "${input.text}"` }),
                execute: (input, ctx) => (items.push(input.text), { id: ctx.operationId, targetId: ctx.operationId }),
              },
              listItems: { execute: () => ({ items: [...items] }) },
            }),
          ),
      },
    ],
  });
  expect(await addAndList({ {{providerAlias}}: host.client(create{{ProviderAlias}}Client) }, "Buy milk")).toEqual(["Buy milk"]);
});
