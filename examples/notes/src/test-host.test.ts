/**
 * The notes provider under `createTestHost`, as a provider author tests a plugin: the real pipeline on
 * in-memory SQLite, calls through the client `toolpact codegen` generated (compiled by this example's tsc).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { isToolpactError } from "@toolpact/client";
import { createTestHost, type TestHost } from "@toolpact/runtime/testing";
import { createNotesClient } from "./generated/index.js";
import { activate } from "./index.js";

const manifest = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "plugin.json");
// The plugin keeps its notes in a database of its own; this test's stays in memory.
process.env.NOTES_DB_PATH = ":memory:";

let host: TestHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

describe("notes under the test host", () => {
  it("creates a note with a token-mode confirmation and finds it", async () => {
    host = await createTestHost({ plugins: [{ manifest, activate }] });
    const notes = host.client(createNotesClient);
    const preview = await notes.createRecord.preview({ title: "groceries" });
    expect(preview.summary).toBe('Create the note "groceries"');
    const token = await notes.createRecord.confirm(preview);
    const created = await notes.createRecord.execute({ title: "groceries" }, { confirmationToken: token });
    const found = await notes.searchRecords.execute({ query: "groc" });
    expect(found.result.records.map((record) => record.id)).toEqual([created.result.id]);
  });

  it("in platform mode, confirm waits until host.approve decides as the user", async () => {
    host = await createTestHost({ plugins: [{ manifest, activate }], confirmation: "platform" });
    const notes = host.client(createNotesClient);
    const preview = await notes.createRecord.preview({ title: "taxes" });
    const waiting = notes.createRecord.confirm(preview);
    await host.approve(preview);
    const created = await notes.createRecord.execute({ title: "taxes" }, { confirmationToken: await waiting });
    expect(created.result.targetId).toBe(created.result.id);
  });

  it("a denied preview runs nothing, and another user does not see the user's notes", async () => {
    host = await createTestHost({ plugins: [{ manifest, activate }], confirmation: "platform" });
    const alice = host.client(createNotesClient);
    const bob = host.client(createNotesClient, { actor: { userId: "bob" } });
    const refused = await alice.createRecord.preview({ title: "refused" });
    const waiting = alice.createRecord.confirm(refused).catch((error: unknown) => error);
    await host.deny(refused);
    const denied = await waiting;
    expect(isToolpactError(denied) && denied.code).toBe("CONFIRMATION_DENIED");

    const preview = await alice.createRecord.preview({ title: "secret" });
    await host.approve(preview);
    await alice.createRecord.execute({ title: "secret" }, { confirmationToken: await alice.createRecord.confirm(preview) });
    expect((await alice.searchRecords.execute({ query: "" })).result.records.map((record) => record.title)).toEqual(["secret"]);
    expect((await bob.searchRecords.execute({ query: "secret" })).result.records).toEqual([]);
  });
});
