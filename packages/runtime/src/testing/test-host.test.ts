import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { PluginSdk } from "../plugin-sdk.js";
import { createTestHost, TEST_CALLER_ID, type TestHost } from "./test-host.js";

const NOTES = "com.example.notes";

const notesManifest = {
  id: NOTES,
  version: "1.0.0",
  permissions: ["tools:provide"],
  tools: [
    {
      name: "create-record",
      effect: "write",
      inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"], additionalProperties: false },
      outputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    },
    {
      name: "search-records",
      effect: "read",
      inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"], additionalProperties: false },
    },
  ],
};

const created: { title: string; userId: string; caller: string }[] = [];
function activate(sdk: PluginSdk): void {
  sdk.tools.provide<{ title: string }, { id: string }>("create-record", {
    preview: (input) => ({ summary: `Create "${input.title}"` }),
    execute: (input, ctx) => {
      created.push({ title: input.title, userId: ctx.actor.userId, caller: ctx.callerPluginId });
      return { id: `rec-${created.length}` };
    },
  });
  sdk.tools.provide<{ query: string }, { hits: string[] }>("search-records", {
    execute: (input) => ({ hits: created.filter((record) => record.title.includes(input.query)).map((record) => record.title) }),
  });
}

const CREATE = { providerId: NOTES, tool: "create-record" } as const;

let host: TestHost | undefined;
let dir: string | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
  created.length = 0;
});

async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: { code: string; message: string }) => error,
  );
}

describe("createTestHost", () => {
  it("runs a confirmed write in token mode: the preview carries the token, execute consumes it once", async () => {
    host = await createTestHost({ plugins: [{ manifest: notesManifest, activate }] });
    const transport = host.transport();
    const preview = await transport.preview(CREATE, { title: "a" });
    expect(preview.summary).toBe('Create "a"');
    if (!preview.confirmation.required || preview.confirmation.mode !== "token") throw new Error("expected a token-mode confirmation");
    const token = preview.confirmation.token;

    expect((await rejection(transport.execute(CREATE, { title: "a" }))).code).toBe("CONFIRMATION_REQUIRED");
    expect((await rejection(transport.execute(CREATE, { title: "b" }, { confirmationToken: token }))).code).toBe("CONFIRMATION_MISMATCH");
    const done = await transport.execute(CREATE, { title: "a" }, { confirmationToken: token });
    expect(done.result).toEqual({ id: "rec-1" });
    expect(created).toEqual([{ title: "a", userId: host.userId, caller: TEST_CALLER_ID }]);
    expect((await rejection(transport.execute(CREATE, { title: "a" }, { confirmationToken: token }))).code).toBe("CONFIRMATION_USED");

    const read = await transport.execute({ providerId: NOTES, tool: "search-records" }, { query: "a" });
    expect(read.result).toEqual({ hits: ["a"] });
    const kinds = (await host.activity()).events.map((event) => `${event.phase}:${event.outcome}`);
    expect(kinds).toContain("execute:succeeded");
  });

  it("in platform mode waits for the user: host.approve lets execute run, host.deny refuses it", async () => {
    host = await createTestHost({ plugins: [{ manifest: notesManifest, activate }], confirmation: "platform" });
    const transport = host.transport();
    const preview = await transport.preview(CREATE, { title: "a" });
    if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected a platform-mode confirmation");
    expect(await host.approve(preview)).toEqual({ requestId: preview.confirmation.requestId, status: "approved" });
    const status = await transport.waitForConfirmation(preview.confirmation.requestId);
    if (status.status !== "approved") throw new Error(`expected approved, got ${status.status}`);
    expect((await transport.execute(CREATE, { title: "a" }, { confirmationToken: status.token })).result).toEqual({ id: "rec-1" });

    const second = await transport.preview(CREATE, { title: "b" });
    if (!second.confirmation.required || second.confirmation.mode !== "platform") throw new Error("expected a platform-mode confirmation");
    await host.deny(second);
    expect((await transport.waitForConfirmation(second.confirmation.requestId)).status).toBe("denied");
  });

  it("approve refuses a token-mode preview and says how to test the user's decision", async () => {
    host = await createTestHost({ plugins: [{ manifest: notesManifest, activate }] });
    const preview = await host.transport().preview(CREATE, { title: "a" });
    const refused = await rejection(host.approve(preview));
    expect(refused.code).toBe("CONFIRMATION_INVALID");
    expect(refused.message).toContain('confirmation: "platform"');
  });

  it("only the actor a request is for may approve it", async () => {
    host = await createTestHost({ plugins: [{ manifest: notesManifest, activate }], confirmation: "platform" });
    const preview = await host.transport({ actor: { userId: "bob" } }).preview(CREATE, { title: "a" });
    expect((await rejection(host.approve(preview))).code).toBe("PERMISSION_DENIED");
    expect((await host.approve(preview, { userId: "bob" })).status).toBe("approved");
  });

  it("calls as another loaded caller, under its own uses", async () => {
    const limited = { id: "com.example.limited", version: "1.0.0", permissions: ["tools:call"], uses: [`${NOTES}:search-records`] };
    host = await createTestHost({ plugins: [{ manifest: notesManifest, activate }, { manifest: limited }] });
    const transport = host.transport({ caller: "com.example.limited" });
    expect((await transport.execute({ providerId: NOTES, tool: "search-records" }, { query: "x" })).result).toEqual({ hits: [] });
    expect((await rejection(transport.preview(CREATE, { title: "a" }))).code).toBe("PERMISSION_DENIED");
    expect(() => host!.transport({ caller: "com.example.limted" })).toThrow(
      'caller "com.example.limted" is not loaded in this test host; did you mean "com.example.limited"?',
    );
  });

  it("loads a plugin folder the way the host does (plugin.json and the module its package.json names)", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "toolpact-test-host-"));
    const plugin = path.join(dir, "echo");
    mkdirSync(path.join(plugin, "dist"), { recursive: true });
    writeFileSync(
      path.join(plugin, "plugin.json"),
      JSON.stringify({
        id: "com.example.echo",
        version: "1.0.0",
        permissions: ["tools:provide"],
        tools: [{ name: "echo", effect: "read", inputSchema: { type: "object" } }],
      }),
    );
    writeFileSync(path.join(plugin, "package.json"), JSON.stringify({ type: "module", main: "dist/main.js" }));
    writeFileSync(
      path.join(plugin, "dist", "main.js"),
      'export function activate(sdk) { sdk.tools.provide("echo", { execute: (input, ctx) => ({ input, tenant: ctx.tenantId }) }); }\n',
    );
    host = await createTestHost({ plugins: [{ dir: plugin }] });
    const answer = await host.transport().execute({ providerId: "com.example.echo", tool: "echo" }, { hello: 1 });
    expect(answer.result).toEqual({ input: { hello: 1 }, tenant: host.tenantId });
  });

  it("refuses an invalid manifest with the loader's diagnostics", async () => {
    const refused = await rejection(createTestHost({ plugins: [{ manifest: { ...notesManifest, permissions: ["tools:provid"] }, activate }] }));
    expect(refused.code).toBe("MANIFEST_INVALID");
    expect(refused.message).toContain("plugins[0].manifest");
  });

  it("reads a manifest from a path", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "toolpact-test-host-"));
    const file = path.join(dir, "plugin.json");
    writeFileSync(file, JSON.stringify(notesManifest));
    host = await createTestHost({ plugins: [{ manifest: file, activate }] });
    expect(host.plugins.map((manifest) => manifest.id)).toEqual([NOTES]);
  });
});
