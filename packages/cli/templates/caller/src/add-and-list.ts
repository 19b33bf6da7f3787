import type { ToolClients } from "./generated/index.js";

/** Adds an item once the user confirms it, then reads the list back: what this caller does for a user. */
export async function addAndList(tools: Pick<ToolClients, "{{providerAlias}}">, text: string): Promise<string[]> {
  const input = { text };
  const preview = await tools.{{providerAlias}}.addItem.preview(input);
  console.log(preview.summary); // what the user is asked to confirm
  if (preview.confirmation.required && preview.confirmation.mode === "platform") {
    console.log(`approve it at ${preview.confirmation.confirmUrl}`); // the tenant's policy: the user confirms on toolpact's page
  }
  // Token mode: the token comes at once. Platform mode: this waits until the user approves in the browser.
  const confirmationToken = await tools.{{providerAlias}}.addItem.confirm(preview);
  await tools.{{providerAlias}}.addItem.execute(input, { confirmationToken });
  return (await tools.{{providerAlias}}.listItems.execute({})).result.items;
}
