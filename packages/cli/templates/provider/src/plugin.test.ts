import { afterEach, expect, it } from "vitest";
import { createTestHost } from "@toolpact/runtime/testing";
import { create{{Alias}}Client } from "./generated/index.js";
import { activate } from "./index.js";

let host: Awaited<ReturnType<typeof createTestHost>> | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

it("adds an item once the user confirms, and lists it", async () => {
  host = await createTestHost({ plugins: [{ manifest: "plugin.json", activate }] });
  const {{alias}} = host.client(create{{Alias}}Client);

  const input = { text: "Buy milk" };
  const preview = await {{alias}}.addItem.preview(input);
  expect(preview.summary).toBe('Add "Buy milk" to your list');
  const confirmationToken = await {{alias}}.addItem.confirm(preview);
  const { result } = await {{alias}}.addItem.execute(input, { confirmationToken });
  expect(result.id).toMatch(/\S/);

  expect((await {{alias}}.listItems.execute({})).result.items).toEqual(["Buy milk"]);
});

it("refuses to run the write twice on one confirmation", async () => {
  host = await createTestHost({ plugins: [{ manifest: "plugin.json", activate }] });
  const {{alias}} = host.client(create{{Alias}}Client);
  const input = { text: "Call Ada" };
  const confirmationToken = await {{alias}}.addItem.confirm(await {{alias}}.addItem.preview(input));
  await {{alias}}.addItem.execute(input, { confirmationToken });
  await expect({{alias}}.addItem.execute(input, { confirmationToken })).rejects.toMatchObject({ code: "CONFIRMATION_USED" });
});
