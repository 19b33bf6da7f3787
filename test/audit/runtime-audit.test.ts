/**
 * The runtime's side of the audit: its checkpoint job links what calls wrote, on its own schedule, and
 * the result verifies with the public key of the storage key; and a real call (the test host authenticates
 * with a real plugin key) says how it
 * was authenticated, confirmed and by whom, its manifest version, schema hash, policy decision and
 * idempotency key hash, including a refused call that never ran.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import {
  createPostgresStore,
  createRuntime,
  createSqliteStore,
  deriveAuditKey,
  storeChainSource,
  type Store,
  type ToolpactRuntime,
  verifyActivityChain,
} from "@toolpact/runtime";
import { createTestHost, type TestHost } from "@toolpact/runtime/testing";
import { openTestDatabase, postgresSkipReason } from "../integration/support/postgres.js";

const notes = {
  id: "com.example.notes",
  version: "2.3.1",
  permissions: ["tools:provide"],
  tools: [
    {
      name: "create",
      effect: "write",
      inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"], additionalProperties: false },
    },
    { name: "search", effect: "read", inputSchema: { type: "object", properties: {}, additionalProperties: false } },
  ],
};

const closing: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of closing.splice(0).reverse()) await item.close();
});

describe("the checkpoint job", () => {
  it("links what was written on its own schedule, and the chain verifies with the storage key's public key", async () => {
    const storageKey = new Uint8Array(randomBytes(32));
    const store: Store = await createSqliteStore({ path: ":memory:" });
    closing.push(store);
    const runtime: ToolpactRuntime = await createRuntime({
      store,
      signingKeys: [{ kid: "k1", key: new Uint8Array(randomBytes(32)) }],
      storageKey,
      actorTokens: { issuer: "https://id.example", secret: new Uint8Array(randomBytes(32)) },
      audit: { checkpointIntervalMs: 50, settleMs: 0 },
    });
    closing.push(runtime);
    const at = Date.now() - 1000;
    await store.appendActivity({ id: "00000000-0000-7000-8000-000000000001", tenantId: "t1", at, kind: "policy", phase: "change", outcome: "succeeded" });
    let latest = await store.activityChain.latestCheckpoint("t1");
    for (let round = 0; round < 200 && latest === undefined; round++) {
      await sleep(25);
      latest = await store.activityChain.latestCheckpoint("t1");
    }
    expect(latest).toMatchObject({ tenantId: "t1", seq: 1, lastId: "00000000-0000-7000-8000-000000000001", keyId: deriveAuditKey(storageKey).keyId });
    const report = await verifyActivityChain(storeChainSource(store.activityChain), deriveAuditKey(storageKey).publicKey);
    expect(report).toMatchObject({ intact: true, tenants: [{ tenantId: "t1", verified: 1, pending: 0 }] });
    // A run asked for while none is due finds nothing new.
    expect(await runtime.checkpointActivity()).toEqual({ checkpoints: [], linked: 0, contended: 0, onWorker: false });
  });

  it("runs on a worker thread with its own connection when the store is a file, and on the calls' thread when told", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "toolpact-audit-worker-"));
    closing.push({ close: async () => rmSync(dir, { recursive: true, force: true }) });
    const storageKey = new Uint8Array(randomBytes(32));
    for (const worker of [true, false]) {
      const store = await createSqliteStore({ path: path.join(dir, `${worker}.db`) });
      const runtime = await createRuntime({
        store,
        signingKeys: [{ kid: "k1", key: new Uint8Array(randomBytes(32)) }],
        storageKey,
        actorTokens: { issuer: "https://id.example", secret: new Uint8Array(randomBytes(32)) },
        audit: { checkpointIntervalMs: 3_600_000, settleMs: 0, worker },
      });
      const at = Date.now() - 1000;
      for (let i = 1; i <= 3; i++) {
        await store.appendActivity({
          id: `00000000-0000-7000-8000-00000000000${i}`,
          tenantId: "t1",
          at,
          kind: "policy",
          phase: "change",
          outcome: "succeeded",
        });
      }
      const run = await runtime.checkpointActivity();
      expect(run).toMatchObject({ linked: 3, onWorker: worker, checkpoints: [{ tenantId: "t1", seq: 3, keyId: deriveAuditKey(storageKey).keyId }] });
      expect(await verifyActivityChain(storeChainSource(store.activityChain), deriveAuditKey(storageKey).publicKey)).toMatchObject({ intact: true });
      // Closing ends the worker: nothing keeps the process, and the store closes after it.
      await runtime.close();
    }
  });

  it("never takes the write lock from the calls: their commits need no busy wait while the worker checkpoints", async () => {
    // With no busy timeout, a commit that met a lock held by another connection would fail at once
    // (SQLITE_BUSY) instead of sleeping in SQLite's busy handler with the whole event loop.
    const dir = mkdtempSync(path.join(tmpdir(), "toolpact-audit-lock-"));
    closing.push({ close: async () => rmSync(dir, { recursive: true, force: true }) });
    const storageKey = new Uint8Array(randomBytes(32));
    const store = await createSqliteStore({ path: path.join(dir, "toolpact.db"), busyTimeoutMs: 0 });
    const runtime = await createRuntime({
      store,
      signingKeys: [{ kid: "k1", key: new Uint8Array(randomBytes(32)) }],
      storageKey,
      actorTokens: { issuer: "https://id.example", secret: new Uint8Array(randomBytes(32)) },
      audit: { checkpointIntervalMs: 3_600_000, settleMs: 0, worker: true },
    });
    closing.push(runtime);
    expect(await runtime.checkpointActivity()).toMatchObject({ linked: 0, onWorker: true });
    const at = Date.now() - 1000;
    const runs = [];
    let written = 0;
    // Written until some checkpoint that linked events has come back while the writes went on (at least
    // 40 rounds; on a machine too busy to start the worker soon, for up to 20 s), so its writes met theirs.
    let writing = true;
    let linkedWhileWriting = 0;
    const deadline = Date.now() + 20_000;
    for (let round = 0; round < 40 || (linkedWhileWriting === 0 && Date.now() < deadline); round++) {
      const run = runtime.checkpointActivity();
      runs.push(run);
      void run.then((made) => {
        if (writing && made.linked > 0) linkedWhileWriting++;
      });
      const appends = [];
      for (let i = 0; i < 250; i++) {
        const id = `00000000-0000-7000-8000-${(++written).toString(16).padStart(12, "0")}`;
        appends.push(store.appendActivity({ id, tenantId: "t1", at, kind: "policy", phase: "change", outcome: "succeeded" }));
      }
      await Promise.all(appends);
      await sleep(2);
    }
    writing = false;
    const made = await Promise.all(runs);
    expect(made.every((run) => run.onWorker === true)).toBe(true);
    expect(linkedWhileWriting).toBeGreaterThan(0);
    await runtime.checkpointActivity();
    expect(await store.activityChain.latestCheckpoint("t1")).toMatchObject({ seq: written });
    expect(await verifyActivityChain(storeChainSource(store.activityChain), deriveAuditKey(storageKey).publicKey)).toMatchObject({
      intact: true,
      tenants: [{ tenantId: "t1", verified: written, pending: 0 }],
    });
  });

  it("is off at 0, and a negative interval is refused", async () => {
    const base = {
      signingKeys: [{ kid: "k1", key: new Uint8Array(randomBytes(32)) }],
      storageKey: new Uint8Array(randomBytes(32)),
      actorTokens: { issuer: "https://id.example", secret: new Uint8Array(randomBytes(32)) },
    };
    const store = await createSqliteStore({ path: ":memory:" });
    closing.push(store);
    await expect(createRuntime({ ...base, store, audit: { checkpointIntervalMs: -1 } })).rejects.toThrow(
      "audit.checkpointIntervalMs must be 0 (off) or more; got -1",
    );
    closing.push(await createRuntime({ ...base, store, audit: { checkpointIntervalMs: 0 } }));
  });
});

const postgresSkip = await postgresSkipReason("The checkpoint worker on PostgreSQL");
describe.skipIf(postgresSkip !== undefined)("the checkpoint worker on PostgreSQL", () => {
  it("opens its own connection in the store's schema and signs what calls wrote there", async () => {
    const database = await openTestDatabase();
    closing.push(database);
    const store = await createPostgresStore({ url: database.url, schema: database.freshSchema() });
    const storageKey = new Uint8Array(randomBytes(32));
    const runtime = await createRuntime({
      store,
      signingKeys: [{ kid: "k1", key: new Uint8Array(randomBytes(32)) }],
      storageKey,
      actorTokens: { issuer: "https://id.example", secret: new Uint8Array(randomBytes(32)) },
      audit: { checkpointIntervalMs: 3_600_000, settleMs: 0 },
    });
    const at = Date.now() - 1000;
    for (let i = 1; i <= 3; i++) {
      await store.appendActivity({ id: `00000000-0000-7000-8000-00000000000${i}`, tenantId: "t1", at, kind: "policy", phase: "change", outcome: "succeeded" });
    }
    expect(await runtime.checkpointActivity()).toMatchObject({ linked: 3, onWorker: true, checkpoints: [{ seq: 3 }] });
    expect(await verifyActivityChain(storeChainSource(store.activityChain), deriveAuditKey(storageKey).publicKey)).toMatchObject({ intact: true });
    await runtime.close();
  });
});

describe("a real call's activity", () => {
  let host: TestHost;

  it("says how it was authenticated and confirmed, by whom, under which manifest, schema and policy decision", async () => {
    host = await createTestHost({
      plugins: [
        {
          manifest: notes,
          activate: (sdk) => {
            sdk.tools.provide("create", { preview: () => ({ summary: "Create a note" }), execute: () => ({ ok: true }) } as never);
            sdk.tools.provide("search", { execute: () => ({ hits: [] }) } as never);
          },
        },
      ],
      policy: {
        rules: [
          { tools: "com.example.notes:create", decision: "confirm" },
          { tools: "com.example.notes:search", decision: "allow" },
        ],
        trustedConfirmationUis: ["toolpact.test-caller"],
      },
    });
    closing.push(host);
    const transport = host.transport();
    const create = { providerId: "com.example.notes", tool: "create" };
    // Refused before anything ran: no confirmation token.
    await expect(transport.execute(create, { title: "a" })).rejects.toMatchObject({ code: "CONFIRMATION_REQUIRED" });
    const preview = await transport.preview(create, { title: "a" });
    if (!preview.confirmation.required || preview.confirmation.mode !== "token") throw new Error("expected a token-mode confirmation");
    await transport.execute(create, { title: "a" }, { confirmationToken: preview.confirmation.token, idempotencyKey: "order-7" });
    await transport.execute({ providerId: "com.example.notes", tool: "search" }, {});

    const events = [...(await host.activity({ limit: 10 })).events].reverse().filter((event) => event.kind === "call");
    const schemaHashes = new Set(events.map((event) => event.schemaHash));
    expect(schemaHashes.size).toBe(2);
    expect(events.map((event) => [event.phase, event.outcome, event.errorCode, event.policyDecision, event.confirmation, event.confirmedBy])).toEqual([
      ["execute", "denied", "CONFIRMATION_REQUIRED", "confirm", undefined, undefined],
      ["preview", "previewed", undefined, "confirm", undefined, undefined],
      ["execute", "succeeded", undefined, "confirm", "token", host.userId],
      ["execute", "succeeded", undefined, "allow", undefined, undefined],
    ]);
    for (const event of events) expect(event).toMatchObject({ authenticatedBy: "plugin-key", manifestVersion: "2.3.1", via: "in-process" });
    expect(events[2]!.idempotencyKeyHash).toBe(createHash("sha256").update("order-7").digest("base64url"));
    expect(JSON.stringify(events)).not.toContain("order-7");
  });
});
