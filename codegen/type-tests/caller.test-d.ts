// Type tests over the caller goldens (codegen/golden/caller: the fixtures generated with
// `--caller codegen/fixtures/callers/assistant.plugin.json`). The assistant's `uses` allows
// create-record@1 and search-records of notes and send-summary@1 of the mailer: every other tool is
// one the runtime would refuse at step 3, and here a call to it does not compile.
import type { ToolTransport } from "@toolpact/client";
import { expectTypeOf } from "vitest";
import { createToolClients, defineNotesProvider, type ToolClients } from "../golden/caller/index.js";

declare const transport: ToolTransport;
const tools = createToolClients(transport);

export async function onlyWhatUsesAllows(): Promise<void> {
  const preview = await tools.notes.createRecordV1.preview({ title: "Q3 plan" });
  await tools.notes.createRecordV1.execute({ title: "Q3 plan" }, { confirmationToken: await tools.notes.createRecordV1.confirm(preview) });
  await tools.notes.searchRecords.execute({ query: "q" });
  await tools.mailer.sendSummary.preview({ to: { kind: "user", userId: "u1" }, subject: "Hi" });

  // @ts-expect-error archive-record is outside the caller's uses
  await tools.notes.archiveRecord.preview({ id: "r1" });
  // @ts-expect-error uses names create-record@1: version 2 is outside it
  await tools.notes.createRecordV2.preview({ title: "x", tags: [] });
  // @ts-expect-error ... and so is the plain name, which stands for version 2
  await tools.notes.createRecord.preview({ title: "x", tags: [] });
  // @ts-expect-error list-templates is outside it
  await tools.mailer.listTemplates.execute({});
  // @ts-expect-error the caller may use no tool of geo-shapes, so it has no client
  void tools.geoShapes;

  expectTypeOf<keyof ToolClients>().toEqualTypeOf<"mailer" | "notes">();
  expectTypeOf<keyof ToolClients["notes"]>().toEqualTypeOf<"createRecordV1" | "searchRecords">();
  expectTypeOf<keyof ToolClients["mailer"]>().toEqualTypeOf<"sendSummary">();
}

export function providersStayWhole(): void {
  // The narrowing is the caller's view only: a provider definition still needs every declared tool.
  defineNotesProvider({
    archiveRecord: { execute: () => ({ archived: true as const }) },
    createRecordV1: { execute: () => ({ id: "1" }) },
    createRecordV2: { execute: () => ({ id: "1", createdAt: "2026-01-01T00:00:00Z" }) },
    searchRecords: { execute: () => [] },
  });
  // @ts-expect-error a declared tool the caller may not call is still one its provider must handle
  defineNotesProvider({ createRecordV1: { execute: () => ({ id: "1" }) }, searchRecords: { execute: () => [] } });
}
