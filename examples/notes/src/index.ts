/**
 * The notes plugin: a provider of record tools, written against the types `toolpact codegen`
 * generated from its plugin.json (`pnpm build` writes them to src/generated/).
 */
import type { ProviderDefinition } from "@toolpact/client";
import type { PluginSdk } from "@toolpact/runtime";
import { defineNotesProvider } from "./generated/index.js";
import { DEFAULT_NOTES_DB, openRecordStore, type RecordOwner, type RecordStore } from "./record-store.js";

export { openRecordStore, DEFAULT_NOTES_DB, type RecordStore, type RecordOwner, type NoteRecord, type NewRecord } from "./record-store.js";

/** Search results when the caller gives no `limit`. */
const DEFAULT_SEARCH_LIMIT = 20;

/** The host loads this: it opens the plugin's own database (NOTES_DB_PATH, default .toolpact/notes.db) and provides every tool. */
export function activate(sdk: PluginSdk): void {
  sdk.tools.provideAll(notesProvider(openRecordStore(process.env.NOTES_DB_PATH ?? DEFAULT_NOTES_DB)));
}

/** The notes tools over a record store. Every record belongs to the acting user of the acting tenant. */
export function notesProvider(records: RecordStore): ProviderDefinition {
  const ownerOf = (ctx: { readonly tenantId: string; readonly actor: { readonly userId: string } }): RecordOwner => ({
    tenantId: ctx.tenantId,
    userId: ctx.actor.userId,
  });
  return defineNotesProvider({
    createRecord: {
      preview: (input) => ({
        summary: `Create the note "${input.title}"`,
        details: { title: input.title, tags: input.tags ?? [], bodyCharacters: input.body?.length ?? 0 },
      }),
      execute: (input, ctx) => {
        const record = records.create(ownerOf(ctx), input, ctx.operationId);
        return { id: record.id, targetId: record.id };
      },
    },
    searchRecords: {
      execute: (input, ctx) => ({
        records: records
          .search(ownerOf(ctx), input.query, input.limit ?? DEFAULT_SEARCH_LIMIT)
          .map((record) => ({ id: record.id, title: record.title, createdAt: record.createdAt })),
      }),
    },
    archiveRecord: {
      // The RFC's "current user can access the provider resource": only the owner's live records.
      authorize: (input, ctx) => {
        const record = records.get(ownerOf(ctx), input.id);
        if (record === undefined) return { allowed: false, reason: `the acting user has no note ${input.id}` };
        if (record.archivedAt !== undefined) return { allowed: false, reason: `note ${input.id} is already archived` };
        return true;
      },
      preview: (input, ctx) => {
        const record = records.get(ownerOf(ctx), input.id);
        return { summary: `Archive the note "${record?.title ?? input.id}"`, details: { id: input.id } };
      },
      execute: (input, ctx) => ({ archived: records.archive(ownerOf(ctx), input.id), targetId: input.id }),
    },
  });
}
