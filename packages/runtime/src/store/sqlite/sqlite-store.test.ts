import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { describeStoreContract } from "../../testing/index.js";
import { migrate } from "./migrations.js";
import { createSqliteStore } from "./sqlite-store.js";
import { SQLITE_MIGRATIONS } from "./migrations.js";

function tempDir(): { dir: string; dispose(): Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), "toolpact-store-"));
  return { dir, dispose: async () => rmSync(dir, { recursive: true, force: true }) };
}

describeStoreContract("sqlite (group commit)", async () => {
  const { dir, dispose } = tempDir();
  const path = join(dir, "toolpact.db");
  return { store: await createSqliteStore({ path }), openPeer: () => createSqliteStore({ path }), dispose };
});

describeStoreContract("sqlite (one transaction per write)", async () => {
  const { dir, dispose } = tempDir();
  const path = join(dir, "toolpact.db");
  return {
    store: await createSqliteStore({ path, groupCommit: false }),
    openPeer: () => createSqliteStore({ path, groupCommit: false }),
    dispose,
  };
});

describeStoreContract("sqlite (:memory:)", () => createSqliteStore({ path: ":memory:" }));

describe("SQLite store", () => {
  it("opens in WAL mode with synchronous=NORMAL and records applied migrations once", async () => {
    const { dir, dispose } = tempDir();
    const path = join(dir, "nested", "toolpact.db");
    const stores = await Promise.all([createSqliteStore({ path }), createSqliteStore({ path })]);
    const db = new Database(path);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    const versions = db.prepare("SELECT version FROM schema_migrations ORDER BY version").pluck().all();
    expect(versions).toEqual(SQLITE_MIGRATIONS.map((step) => step.version));
    expect(migrate(db, SQLITE_MIGRATIONS)).toBe(0);
    db.close();
    for (const store of stores) await store.close();
    await dispose();
  });

  it("refuses a database whose schema is newer than this code", async () => {
    const { dir, dispose } = tempDir();
    const path = join(dir, "toolpact.db");
    const store = await createSqliteStore({ path });
    await store.close();
    const db = new Database(path);
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)").run();
    db.close();
    await expect(createSqliteStore({ path })).rejects.toMatchObject({
      code: "STORE_UNAVAILABLE",
      cause: { message: expect.stringContaining("newer than this toolpact knows") },
    });
    await dispose();
  });

  it("keeps one failing write of a group commit from undoing the others", async () => {
    const { dir, dispose } = tempDir();
    const store = await createSqliteStore({ path: join(dir, "toolpact.db") });
    const key = { keyId: "same", tenantId: "t", pluginId: "p", keyHash: new Uint8Array(32), createdAt: 1 };
    await store.insertPluginKey(key);
    const event = { id: "0190aaaa-0000-7000-8000-000000000001", tenantId: "t", at: 1, kind: "call", phase: "execute", outcome: "succeeded" } as const;
    const [duplicate, appended, installed] = await Promise.allSettled([
      store.insertPluginKey(key),
      store.appendActivity(event),
      store.installPlugin("t", "p", 1),
    ]);
    expect(duplicate.status).toBe("rejected");
    expect((duplicate as PromiseRejectedResult).reason).toMatchObject({ code: "STORE_UNAVAILABLE" });
    expect(appended.status).toBe("fulfilled");
    expect(installed.status).toBe("fulfilled");
    expect((await store.listActivity("t", { limit: 5 })).map((e) => e.id)).toEqual([event.id]);
    expect((await store.loadTenantConfig("t"))?.plugins.map((p) => p.pluginId)).toEqual(["p"]);
    await store.close();
    await dispose();
  });

  it("checkpoints the WAL from a background worker, not the writing connection", async () => {
    const { dir, dispose } = tempDir();
    const path = join(dir, "toolpact.db");
    const store = await createSqliteStore({ path, checkpointIntervalMs: 20 });
    const initial = statSync(path).size;
    for (let i = 0; i < 200; i++) {
      await store.appendActivity({
        id: `0190aaaa-0000-7000-8000-${String(i).padStart(12, "0")}`,
        tenantId: "t",
        at: i,
        kind: "call",
        phase: "execute",
        outcome: "succeeded",
        tool: "x".repeat(200),
      });
    }
    const deadline = Date.now() + 5_000;
    while (statSync(path).size <= initial && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(statSync(path).size).toBeGreaterThan(initial);
    await store.close();
    await dispose();
  });

  it("stops at once when the checkpoint worker is gone, and starts it even under --input-type=module", async () => {
    const { dir, dispose } = tempDir();
    const path = join(dir, "toolpact.db");
    const store = await createSqliteStore({ path, checkpointIntervalMs: 10 });
    await store.appendActivity({ id: "0190aaaa-0000-7000-8000-000000000001", tenantId: "t", at: 1, kind: "call", phase: "execute", outcome: "succeeded" });
    const started = performance.now();
    await store.close();
    expect(performance.now() - started).toBeLessThan(2000);

    // The built store in a process whose flags would make an inherited eval worker an ES module.
    const built = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "store", "sqlite-store.js");
    if (!existsSync(built)) return;
    const modulePath = join(dir, "module.db");
    const script = `
      const { statSync } = await import("node:fs");
      const { createSqliteStore } = await import(${JSON.stringify(pathToFileURL(built).href)});
      const path = ${JSON.stringify(modulePath)};
      const store = await createSqliteStore({ path, checkpointIntervalMs: 10 });
      const initial = statSync(path).size;
      for (let i = 0; i < 200; i++) {
        await store.appendActivity({ id: "0190aaaa-0000-7000-8000-" + String(i).padStart(12, "0"), tenantId: "t", at: i,
          kind: "call", phase: "execute", outcome: "succeeded", tool: "x".repeat(200) });
      }
      const deadline = Date.now() + 5000;
      while (statSync(path).size <= initial && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      const checkpointed = statSync(path).size > initial;
      await store.close();
      console.log(checkpointed ? "checkpointed" : "not checkpointed");`;
    const output = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ["--input-type=module", "-e", script], { timeout: 10_000 }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout + stderr),
      );
    });
    expect(output.trim()).toBe("checkpointed");
    await dispose();
  });
});
