import type { ToolClients } from "./generated/index.js";

/** Adds an item once the user confirms it, then reads the list back: what this caller does for a user. */
export async function addAndList(tools: Pick<ToolClients, "{{providerAlias}}">, text: string): Promise<string[]> {
  const input = { text };
  const preview = await tools.{{providerAlias}}.addItem.preview(input);
  console.log(preview.summary); // what the user is asked to confirm
  // Token mode: the token comes at once. Platform mode: the user approves on toolpact's page, and this waits.
  const confirmationToken = await tools.{{providerAlias}}.addItem.confirm(preview, {
    onConfirmationRequired: ({ confirmUrl }) => console.log(`approve it at ${confirmUrl}`),
  });
  await tools.{{providerAlias}}.addItem.execute(input, { confirmationToken });
  return (await tools.{{providerAlias}}.listItems.execute({})).result.items;
}
