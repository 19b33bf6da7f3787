// Type tests over the golden output (codegen/golden, generated from codegen/fixtures). They are
// type-checked by codegen/src/type-tests.test.ts: every line marked @ts-expect-error must fail to
// compile, every other line must compile.
import type {
  ConfirmationToken,
  ConfirmedToolClient,
  ExecuteResult,
  PreviewSummary,
  ProviderDefinition,
  ToolCallContext,
  ToolClient,
  ToolExecuteContext,
  ToolPreview,
  ToolTransport,
} from "@toolpact/client";
import { expectTypeOf } from "vitest";
import { GeoShapes, Mailer, Notes, createToolClients, defineMailerProvider, defineNotesProvider, type ToolClients } from "../golden/index.js";

declare const transport: ToolTransport;
const tools = createToolClients(transport);
const notes = tools.notes;

type CreateRecordV1 = "com.example.notes:create-record@1";
type CreateRecordV2 = "com.example.notes:create-record@2";
type SearchRecords = "com.example.notes:search-records@1";

export async function inputFieldsAreChecked(): Promise<void> {
  await notes.createRecordV1.preview({ title: "Q3 plan" });
  await notes.createRecordV1.preview({ title: "Q3 plan", priority: "high" });
  // @ts-expect-error a wrong field type
  await notes.createRecordV1.preview({ title: 42 });
  // @ts-expect-error a missing required field
  await notes.createRecordV1.preview({ priority: "low" });
  // @ts-expect-error an unknown field
  await notes.createRecordV1.preview({ title: "Q3 plan", colour: "red" });
  // @ts-expect-error an enum miss (enums are literal unions)
  await notes.createRecordV1.preview({ title: "Q3 plan", priority: "urgent" });
  expectTypeOf<Notes.CreateRecordV1Input["priority"]>().toEqualTypeOf<"low" | "normal" | "high" | undefined>();

  await notes.createRecord.preview({ title: "x", tags: [], place: { lat: 1, lng: 2 } });
  // @ts-expect-error a nested required field is missing
  await notes.createRecord.preview({ title: "x", tags: [], place: { lat: 1 } });
  // @ts-expect-error a nested field has the wrong type
  await notes.createRecord.preview({ title: "x", tags: [], place: { lat: 1, lng: "2" } });
  // @ts-expect-error a nested unknown field
  await notes.createRecord.preview({ title: "x", tags: [], place: { lat: 1, lng: 2, alt: 3 } });
  // @ts-expect-error the same checks hold on execute
  await notes.searchRecords.execute({ query: 1 });
}

export async function confirmationIsTyped(): Promise<void> {
  const preview = await notes.createRecordV1.preview({ title: "x" });
  expectTypeOf(preview).toEqualTypeOf<ToolPreview<CreateRecordV1>>();
  const token = await notes.createRecordV1.confirm(preview);
  expectTypeOf(token).toEqualTypeOf<ConfirmationToken<CreateRecordV1>>();
  const done = await notes.createRecordV1.execute({ title: "x" }, { confirmationToken: token, idempotencyKey: "k", runId: "r" });
  expectTypeOf(done).toEqualTypeOf<ExecuteResult<Notes.CreateRecordV1Output>>();

  // @ts-expect-error execute of a confirmation-requiring tool without options
  await notes.createRecordV1.execute({ title: "x" });
  // @ts-expect-error execute of a confirmation-requiring tool with options but no token
  await notes.createRecordV1.execute({ title: "x" }, { idempotencyKey: "k" });
  // @ts-expect-error a plain string is not a token
  await notes.createRecordV1.execute({ title: "x" }, { confirmationToken: "forged" });
  // @ts-expect-error neither is a string cast to the wrong tool's token type
  await notes.createRecordV1.execute({ title: "x" }, { confirmationToken: "forged" as ConfirmationToken<CreateRecordV2> });
  const archiveToken = await notes.archiveRecord.confirm(await notes.archiveRecord.preview({ id: "r1" }));
  // @ts-expect-error another tool's token
  await notes.createRecordV1.execute({ title: "x" }, { confirmationToken: archiveToken });
  const v2Token = await notes.createRecordV2.confirm(await notes.createRecordV2.preview({ title: "x", tags: [] }));
  // @ts-expect-error another version's token of the same tool
  await notes.createRecordV1.execute({ title: "x" }, { confirmationToken: v2Token });
  // @ts-expect-error an undefined token where one is required
  await notes.createRecordV1.execute({ title: "x" }, { confirmationToken: undefined });
  // @ts-expect-error confirm takes only this tool's preview
  await notes.createRecordV1.confirm(await notes.archiveRecord.preview({ id: "r1" }));
  // @ts-expect-error confirm does not take a bare preview result either
  await notes.createRecordV1.confirm({ summary: "", details: null, confirmation: { required: false } });

  // A read tool whose manifest requires confirmation is held to the same rule.
  const measureToken = await tools.geoShapes.measure.confirm(await tools.geoShapes.measure.preview({ shape: { kind: "circle", radius: 1 } }));
  await tools.geoShapes.measure.execute({ shape: { kind: "circle", radius: 1 } }, { confirmationToken: measureToken });
  // @ts-expect-error ... so it cannot run without its token
  await tools.geoShapes.measure.execute({ shape: { kind: "circle", radius: 1 } });
}

export async function optionalConfirmation(): Promise<void> {
  await notes.searchRecords.execute({ query: "q" });
  await notes.searchRecords.execute({ query: "q" }, { idempotencyKey: "k" });
  const token = await notes.searchRecords.confirm(await notes.searchRecords.preview({ query: "q" }));
  expectTypeOf(token).toEqualTypeOf<ConfirmationToken<SearchRecords> | undefined>();
  await notes.searchRecords.execute({ query: "q" }, { confirmationToken: token });
  if (token) await notes.searchRecords.execute({ query: "q" }, { confirmationToken: token });
  // @ts-expect-error a plain string is not a token here either
  await notes.searchRecords.execute({ query: "q" }, { confirmationToken: "forged" });
  const otherToken = await notes.archiveRecord.confirm(await notes.archiveRecord.preview({ id: "r1" }));
  // @ts-expect-error nor is another tool's token
  await notes.searchRecords.execute({ query: "q" }, { confirmationToken: otherToken });
}

/** Members of a client that lack `confirm`; never when every tool has one. */
type WithoutConfirm<TClient> = {
  [K in keyof TClient]: TClient[K] extends { confirm(preview: never): Promise<unknown> } ? never : K;
}[keyof TClient];

export function everyToolHasConfirm(): void {
  expectTypeOf<keyof ToolClients>().toEqualTypeOf<"geoShapes" | "mailer" | "notes">();
  expectTypeOf<WithoutConfirm<ToolClients["notes"]>>().toEqualTypeOf<never>();
  expectTypeOf<WithoutConfirm<ToolClients["mailer"]>>().toEqualTypeOf<never>();
  expectTypeOf<WithoutConfirm<ToolClients["geoShapes"]>>().toEqualTypeOf<never>();
  // The check above does see a member without confirm:
  expectTypeOf<WithoutConfirm<{ a: { confirm(preview: never): Promise<unknown> }; b: { execute(): void } }>>().toEqualTypeOf<"b">();
}

export async function resultsFollowOutputSchema(): Promise<void> {
  const token = await notes.createRecord.confirm(await notes.createRecord.preview({ title: "x", tags: [] }));
  const created = await notes.createRecord.execute({ title: "x", tags: [] }, { confirmationToken: token });
  expectTypeOf(created.result).toEqualTypeOf<Notes.CreateRecordV2Output>();
  expectTypeOf(created.result.createdAt).toEqualTypeOf<string>();
  expectTypeOf(created.operationId).toEqualTypeOf<string>();
  // @ts-expect-error the result has no such field
  void created.result.title;

  const found = await notes.searchRecords.execute({ query: "q" });
  expectTypeOf(found.result).toEqualTypeOf<unknown>();

  const templates = await tools.mailer.listTemplates.execute({});
  expectTypeOf(templates.result).toEqualTypeOf<{ id: string; name: string }[]>();

  const archived = await notes.archiveRecord.execute(
    { id: "r1" },
    { confirmationToken: await notes.archiveRecord.confirm(await notes.archiveRecord.preview({ id: "r1" })) },
  );
  expectTypeOf(archived.result.archived).toEqualTypeOf<true>();
}

const noteHandlers = {
  archiveRecord: { execute: () => ({ archived: true as const }) },
  createRecordV1: { execute: () => ({ id: "1" }) },
  createRecordV2: { execute: () => ({ id: "1", createdAt: "2026-01-01T00:00:00Z" }) },
  searchRecords: { execute: () => [] },
};

export function providerDefinitions(): void {
  expectTypeOf(defineNotesProvider(noteHandlers)).toEqualTypeOf<ProviderDefinition>();
  const { searchRecords: _search, ...withoutSearch } = noteHandlers;
  // @ts-expect-error a declared tool is missing
  defineNotesProvider(withoutSearch);
  defineNotesProvider({
    ...noteHandlers,
    // @ts-expect-error an undeclared tool is added
    deleteEverything: { execute: () => ({}) },
  });
  defineNotesProvider({
    ...withoutSearch,
    // @ts-expect-error with several versions, handlers are per version: the plain name is no handler key
    createRecord: { execute: () => ({ id: "1" }) },
    searchRecords: noteHandlers.searchRecords,
  });

  defineNotesProvider({
    ...noteHandlers,
    createRecordV1: {
      preview: (input, ctx) => {
        expectTypeOf(input).toEqualTypeOf<Notes.CreateRecordV1Input>();
        expectTypeOf(ctx).toEqualTypeOf<ToolCallContext>();
        return { summary: `Create "${input.title}"`, details: input };
      },
      authorize: (input) => input.priority !== "high",
      execute: async (input, ctx) => {
        expectTypeOf(input.title).toEqualTypeOf<string>();
        expectTypeOf(ctx).toEqualTypeOf<ToolExecuteContext>();
        return { id: ctx.operationId };
      },
    },
  });
  defineNotesProvider({
    ...noteHandlers,
    // @ts-expect-error a result that does not match outputSchema
    createRecordV1: { execute: () => ({ id: 1 }) },
  });
  defineNotesProvider({
    ...noteHandlers,
    // @ts-expect-error a handler must execute
    createRecordV1: { preview: (): PreviewSummary => ({ summary: "s" }) },
  });
  // Without outputSchema the result is unknown: anything goes.
  defineNotesProvider({ ...noteHandlers, searchRecords: { execute: () => 42 } });

  defineMailerProvider({
    listTemplates: { execute: () => [{ id: "t1", name: "Weekly" }] },
    sendSummary: {
      execute: (input) => {
        if (input.to.kind === "user") expectTypeOf(input.to.userId).toEqualTypeOf<string>();
        return { messageId: "m1", accepted: [] };
      },
    },
  });
}

export function versionRules(): void {
  expectTypeOf(notes.createRecord).toEqualTypeOf(notes.createRecordV2);
  expectTypeOf(notes.createRecord).not.toEqualTypeOf(notes.createRecordV1);
  expectTypeOf<Parameters<typeof notes.createRecordV1.preview>[0]>().toEqualTypeOf<Notes.CreateRecordV1Input>();
  expectTypeOf<Parameters<typeof notes.createRecord.preview>[0]>().toEqualTypeOf<Notes.CreateRecordV2Input>();
  expectTypeOf(Notes.createRecordV2Descriptor.fullName).toEqualTypeOf<CreateRecordV2>();
  expectTypeOf(Notes.createRecordV1Descriptor.version).toEqualTypeOf<1>();
  // @ts-expect-error version 2 requires tags, version 1 does not know them
  void notes.createRecord.preview({ title: "x" });
  void notes.createRecordV1.preview({ title: "x" });
  // @ts-expect-error a single-version tool has only its plain method
  void notes.searchRecordsV1;
  // @ts-expect-error there is no version 3
  void notes.createRecordV3;
}

export async function schemaShapes(): Promise<void> {
  // $ref / $defs
  expectTypeOf<Notes.CreateRecordV2Input["place"]>().toEqualTypeOf<Notes.CreateRecordV2Input_Place | undefined>();
  // oneOf: either branch, not a mix
  const mail = tools.mailer.sendSummary;
  await mail.preview({ to: { kind: "user", userId: "u1" }, subject: "Hi" });
  await mail.preview({ to: { kind: "address", email: "a@example.com" }, subject: "Hi" });
  // @ts-expect-error a branch's field on the other branch
  await mail.preview({ to: { kind: "user", email: "a@example.com" }, subject: "Hi" });
  // @ts-expect-error a kind no branch has
  await mail.preview({ to: { kind: "group", userId: "u1" }, subject: "Hi" });
  // nested objects
  await mail.preview({ to: { kind: "user", userId: "u1" }, subject: "Hi", options: { priority: "urgent" } });
  // @ts-expect-error a nested object's required field
  await mail.preview({ to: { kind: "user", userId: "u1" }, subject: "Hi", options: { tracking: true } });
  // nested arrays
  expectTypeOf<NonNullable<Mailer.SendSummaryInput["table"]>>().toEqualTypeOf<(string | number | null)[][]>();
  await mail.preview({ to: { kind: "user", userId: "u1" }, subject: "Hi", table: [["a", 1, null]] });
  // @ts-expect-error a cell of the wrong type in a nested array
  await mail.preview({ to: { kind: "user", userId: "u1" }, subject: "Hi", table: [["a", true]] });
  // @ts-expect-error an object in an array of arrays misses a required field
  await mail.preview({ to: { kind: "user", userId: "u1" }, subject: "Hi", attachments: [{ name: "a", parts: [{ size: 1 }] }] });

  // $anchor references, recursion, maps, open objects, nullable types
  const measure = tools.geoShapes.measure;
  await measure.preview({
    shape: {
      kind: "polygon",
      points: [
        [0, 0],
        [1, 0],
        [0, 1],
      ],
    },
    tree: { name: "root", children: [{ name: "leaf" }] },
  });
  // @ts-expect-error a shape branch misses its required field
  await measure.preview({ shape: { kind: "circle" } });
  // @ts-expect-error recursion keeps its required fields
  await measure.preview({ shape: { kind: "circle", radius: 1 }, tree: { name: "root", children: [{}] } });
  await measure.preview({ shape: { kind: "circle", radius: 1 }, metadata: { any: ["thing"] }, counts: { a: 1 }, label: null });
  // @ts-expect-error a map's values keep their type
  await measure.preview({ shape: { kind: "circle", radius: 1 }, counts: { a: "1" } });
  await measure.preview({ shape: { kind: "circle", radius: 1 }, "odd-key": true, unit: 'it\'s "quoted"' });
  // Keywords codegen cannot express leave the type wider, never wrong: `not` gives unknown.
  expectTypeOf<GeoShapes.MeasureInput["notString"]>().toEqualTypeOf<unknown>();
  // allOf in a draft-07 output schema
  expectTypeOf<NonNullable<GeoShapes.MeasureOutput["bounds"]>>().toEqualTypeOf<{ width: number } & { height: number }>();
  // An object schema without properties stays open.
  await tools.mailer.listTemplates.preview({ anything: 1 });
  // @ts-expect-error text from a manifest stays inside comments: nothing it says becomes code
  void GeoShapes.injected;
}

/**
 * The generated `<Tool>Methods` interfaces spell out what `createToolMethod` and
 * `createConfirmedToolMethod` return, so the generated factories can skip comparing the two on every
 * consumer's build: these lines prove the shapes are the same, both ways.
 */
export function methodsMatchTheClientLibrary(): void {
  type Confirmed = ConfirmedToolClient<CreateRecordV1, Notes.CreateRecordV1Input, Notes.CreateRecordV1Output>;
  expectTypeOf<Notes.CreateRecordV1Methods>().toEqualTypeOf<Confirmed>();
  expectTypeOf<Notes.CreateRecordV1Methods>().toExtend<Confirmed>();
  expectTypeOf<Confirmed>().toExtend<Notes.CreateRecordV1Methods>();
  type Optional = ToolClient<SearchRecords, Notes.SearchRecordsInput, unknown>;
  expectTypeOf<Notes.SearchRecordsMethods>().toEqualTypeOf<Optional>();
  expectTypeOf<Notes.SearchRecordsMethods>().toExtend<Optional>();
  expectTypeOf<Optional>().toExtend<Notes.SearchRecordsMethods>();
  // A confirmed tool's methods are not an optional-confirmation client (execute needs its token).
  expectTypeOf<Notes.CreateRecordV1Methods>().not.toEqualTypeOf<ToolClient<CreateRecordV1, Notes.CreateRecordV1Input, Notes.CreateRecordV1Output>>();
}
