import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isToolpactError, type ToolpactErrorCode } from "@toolpact/client";
import { loadManifestOrThrow } from "@toolpact/contract";
import { createRuntime, createSqliteStore, type ToolpactRuntime } from "@toolpact/runtime";
import { createInProcessTransport } from "@toolpact/server";
import { createNotesClient, type NotesClient } from "./generated/index.js";
import { activate, openRecordStore } from "./index.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const NOTES = "com.example.notes";
const ASSISTANT = "com.example.assistant";
const ISSUER = "https://id.notes-test.example";
const TENANT = "tenant-notes";

let dir: string;
let runtime: ToolpactRuntime;
const actorSecret = new Uint8Array(randomBytes(32));
let assistantKey: string;

/** An actor token for `sub` in `tid`, issued to the assistant, as the platform's identity service would. */
function actorToken(sub: string, options: { tid?: string; lvl?: number } = {}): Promise<string> {
  return new SignJWT({ tid: options.tid ?? TENANT, lvl: options.lvl ?? 1, azp: ASSISTANT })
    .setProtectedHeader({ alg: "HS256" })
    .setIssuer(ISSUER)
    .setAudience("toolpact")
    .setSubject(sub)
    .setExpirationTime("10m")
    .sign(actorSecret);
}

/** The generated notes client for one user, over the in-process transport (the router, without a socket). */
async function clientFor(sub: string, options: { tid?: string; lvl?: number; key?: string } = {}): Promise<NotesClient> {
  const transport = createInProcessTransport({ runtime, pluginKey: options.key ?? assistantKey, actorToken: await actorToken(sub, options) });
  return createNotesClient(transport);
}

async function createNote(notes: NotesClient, title: string, body?: string): Promise<string> {
  const input = body === undefined ? { title } : { title, body };
  const preview = await notes.createRecord.preview(input);
  const token = await notes.createRecord.confirm(preview);
  const { result } = await notes.createRecord.execute(input, { confirmationToken: token });
  return result.id;
}

async function codeOf(promise: Promise<unknown>): Promise<ToolpactErrorCode | "resolved"> {
  try {
    await promise;
    return "resolved";
  } catch (error) {
    if (isToolpactError(error)) return error.code;
    throw error;
  }
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-notes-"));
  runtime = await createRuntime({
    store: await createSqliteStore({ path: path.join(dir, "toolpact.db") }),
    signingKeys: [{ kid: "k1", key: new Uint8Array(randomBytes(32)) }],
    storageKey: new Uint8Array(randomBytes(32)),
    actorTokens: { issuer: ISSUER, secret: actorSecret },
  });
  runtime.registerPlugin(await loadManifestOrThrow(path.join(here, "../plugin.json")));
  runtime.registerPlugin(await loadManifestOrThrow(path.join(here, "../../assistant/plugin.json")));
  // What the host does: the plugin reads its own settings from the environment and activates.
  process.env.NOTES_DB_PATH = path.join(dir, "notes.db");
  activate(runtime.sdkFor(NOTES));
  delete process.env.NOTES_DB_PATH;

  for (const tenant of [TENANT, "tenant-other"]) {
    await runtime.admin.installPlugin(tenant, NOTES);
    await runtime.admin.installPlugin(tenant, ASSISTANT);
    await runtime.admin.setPolicy(tenant, {
      rules: [{ tools: `${NOTES}:*`, callers: [ASSISTANT], decision: "allow" }],
      trustedConfirmationUis: [ASSISTANT],
    });
  }
  assistantKey = (await runtime.admin.issuePluginKey(TENANT, ASSISTANT)).key;
});

afterAll(async () => {
  await runtime?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the notes provider, through the generated client and a real runtime", () => {
  it("creates a record after confirmation and names it as the activity's targetId", async () => {
    const notes = await clientFor("ada");
    const preview = await notes.createRecord.preview({ title: "Q3 plan", body: "Hire two.", tags: ["planning"] });
    expect(preview.summary).toBe('Create the note "Q3 plan"');
    expect(preview.details).toEqual({ title: "Q3 plan", tags: ["planning"], bodyCharacters: 9 });
    expect(preview.confirmation).toMatchObject({ required: true, mode: "token" });

    const token = await notes.createRecord.confirm(preview);
    const { operationId, result } = await notes.createRecord.execute({ title: "Q3 plan", body: "Hire two.", tags: ["planning"] }, { confirmationToken: token });
    expect(result.id).toMatch(/^rec_[0-9a-f-]{36}$/);
    expect(result.targetId).toBe(result.id);

    const { events } = await runtime.admin.listActivity(TENANT);
    const executed = events.find((event) => event.operationId === operationId);
    expect(executed).toMatchObject({
      tool: `${NOTES}:create-record@1`,
      phase: "execute",
      outcome: "succeeded",
      actorUserId: "ada",
      callerPluginId: ASSISTANT,
      targetId: result.id,
    });
  });

  it("refuses to create without the confirmation the manifest requires", async () => {
    const notes = await clientFor("ada");
    // @ts-expect-error: the generated client requires this tool's confirmation token
    const attempt = notes.createRecord.execute({ title: "unconfirmed" }, {});
    expect(await codeOf(attempt)).toBe("CONFIRMATION_REQUIRED");
  });

  it("scopes records to the acting user: another user finds nothing and cannot archive", async () => {
    const ada = await clientFor("ada");
    const bob = await clientFor("bob");
    const id = await createNote(ada, "Ada's launch checklist", "budget and dates");

    expect((await ada.searchRecords.execute({ query: "launch" })).result.records.map((r) => r.id)).toContain(id);
    expect((await ada.searchRecords.execute({ query: "budget" })).result.records.map((r) => r.id)).toContain(id);
    expect((await bob.searchRecords.execute({ query: "launch" })).result.records).toEqual([]);

    // Bob names Ada's record id: the provider's authorize refuses before any preview or effect.
    expect(await codeOf(bob.archiveRecord.preview({ id }))).toBe("PERMISSION_DENIED");
    expect((await ada.searchRecords.execute({ query: "launch" })).result.records.map((r) => r.id)).toContain(id);
  });

  it("scopes records to the tenant: the same user id in another tenant sees none of them", async () => {
    const ada = await clientFor("ada");
    await createNote(ada, "tenant-scoped plan");
    const otherKey = (await runtime.admin.issuePluginKey("tenant-other", ASSISTANT)).key;
    const adaElsewhere = await clientFor("ada", { tid: "tenant-other", key: otherKey });
    expect((await adaElsewhere.searchRecords.execute({ query: "tenant-scoped" })).result.records).toEqual([]);
  });

  it("treats search text literally: % and _ are not wildcards", async () => {
    const ada = await clientFor("ada");
    await createNote(ada, "plain words only");
    expect((await ada.searchRecords.execute({ query: "%" })).result.records.map((r) => r.title)).not.toContain("plain words only");
    expect((await ada.searchRecords.execute({ query: "plain_words" })).result.records).toEqual([]);
    const percent = await createNote(ada, "50% done");
    expect((await ada.searchRecords.execute({ query: "50%" })).result.records.map((r) => r.id)).toEqual([percent]);
  });

  it("archives only for a verified user (minVerificationLevel 1), and archived notes leave search", async () => {
    const id = await createNote(await clientFor("cy"), "to be archived");
    const unverified = await clientFor("cy", { lvl: 0 });
    expect(await codeOf(unverified.archiveRecord.preview({ id }))).toBe("VERIFICATION_REQUIRED");

    const cy = await clientFor("cy", { lvl: 1 });
    const preview = await cy.archiveRecord.preview({ id });
    expect(preview.summary).toBe('Archive the note "to be archived"');
    const { result } = await cy.archiveRecord.execute({ id }, { confirmationToken: await cy.archiveRecord.confirm(preview) });
    expect(result).toEqual({ archived: true, targetId: id });
    expect((await cy.searchRecords.execute({ query: "archived" })).result.records).toEqual([]);
    // Archived once: a second archive is refused by the provider's authorize.
    expect(await codeOf(cy.archiveRecord.preview({ id }))).toBe("PERMISSION_DENIED");
  });

  it("rejects input the manifest's schema forbids before the provider sees it", async () => {
    const ada = await clientFor("ada");
    const attempt = ada.createRecord.preview({ title: "" });
    expect(await codeOf(attempt)).toBe("INPUT_INVALID");
  });
});

describe("the record store", () => {
  it("creates one record per operation id, even when an operation is re-invoked", () => {
    const store = openRecordStore(":memory:");
    const owner = { tenantId: "t", userId: "u" };
    const first = store.create(owner, { title: "once" }, "op-1");
    const again = store.create(owner, { title: "once" }, "op-1");
    expect(again.id).toBe(first.id);
    expect(store.search(owner, "once", 10)).toHaveLength(1);
    store.close();
  });

  it("does not hand one owner's operation record to another owner", () => {
    const store = openRecordStore(":memory:");
    store.create({ tenantId: "t", userId: "u" }, { title: "mine" }, "op-1");
    expect(() => store.create({ tenantId: "t", userId: "v" }, { title: "theirs" }, "op-1")).toThrow(/another owner/);
    expect(store.search({ tenantId: "t", userId: "v" }, "", 10)).toEqual([]);
    store.close();
  });
});
