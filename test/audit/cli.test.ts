/**
 * `toolpact audit` in process through main(argv, io), on a real SQLite file: key, checkpoint, verify,
 * export (JSONL and CSV, whole and windowed) and offline verify of the export with the public key; then
 * one row edited in the database and one line edited in the export, each caught and named.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActivityRecord, createSqliteStore } from "@toolpact/runtime";
import { preloadCommands, runMain } from "../../packages/cli/src/cli-test-helpers.js";

type SqliteHandle = { prepare(sql: string): { run(...values: unknown[]): unknown }; close(): void };
const Database = createRequire(new URL("../../packages/runtime/package.json", import.meta.url))("better-sqlite3") as new (file: string) => SqliteHandle;

const HOUR = 3_600_000;
let dir: string;
let env: NodeJS.ProcessEnv;
const events: ActivityRecord[] = [];

/** Events of two tenants, one an hour over the last 12 hours. */
function event(tenantId: string, at: number, index: number): ActivityRecord {
  const hex = at.toString(16).padStart(12, "0");
  return {
    id: `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-${index.toString(16).padStart(12, "0")}`,
    tenantId,
    at,
    kind: "call",
    actorUserId: `user-${index}`,
    callerPluginId: "com.example.caller",
    tool: "com.example.notes:create@1",
    phase: "execute",
    outcome: "succeeded",
    // Text a terminal would act on, and a CSV cell a spreadsheet would run: exported as they are.
    ...(index === 3 ? { errorClass: "=cmd|' /C calc'!A0 \u202e" } : {}),
  };
}

const audit = (...args: string[]) => runMain(["audit", ...args], { cwd: dir, env: { ...env } });

beforeAll(async () => {
  await preloadCommands("audit");
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-audit-cli-"));
  writeFileSync(path.join(dir, "toolpact.config.json"), JSON.stringify({ database: "./audit.db", audit: { settleSeconds: 1 } }));
  env = { ...process.env, TOOLPACT_STORAGE_KEY: randomBytes(32).toString("base64") };
  delete env.TOOLPACT_DATABASE_URL;
  const store = await createSqliteStore({ path: path.join(dir, "audit.db") });
  const now = Date.now();
  for (let index = 0; index < 12; index++) {
    for (const tenant of ["acme", "globex"]) {
      const record = event(tenant, now - (12 - index) * HOUR, index);
      events.push(record);
      await store.appendActivity(record);
    }
  }
  await store.close();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("toolpact audit", () => {
  let publicKey: string;

  it("key prints the public key; checkpoint links the settled events; verify finds them intact", async () => {
    const key = await audit("key");
    expect(key.code).toBe(0);
    publicKey = key.stdout.trim();
    expect(publicKey).toMatch(/^ed25519:[A-Za-z0-9_-]{43}$/);

    const made = await audit("checkpoint");
    expect(made.stderr).toBe("");
    expect(made.code).toBe(0);
    expect(made.stdout).toContain("linked 24 events older than 1 s in 2 tenants");
    expect(made.stdout).toContain("tenant acme: checkpoint 12 up to event");

    const verified = await audit("verify", "--config", "toolpact.config.json");
    expect(verified.code).toBe(0);
    expect(verified.stdout).toContain("tenant acme: 12 events intact up to checkpoint 12");
    expect(verified.stdout).toContain("intact (2 tenants)");
  });

  it("export writes events with checkpoints; the export verifies offline with the public key only", async () => {
    const out = await audit("export", "--out", "all.jsonl");
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("24 events with their checkpoints written to all.jsonl");
    const lines = readFileSync(path.join(dir, "all.jsonl"), "utf8").trim().split("\n");
    expect(lines).toHaveLength(26);
    const offline = await runMain(["audit", "verify", "--file", "all.jsonl", "--public-key", publicKey], { cwd: dir, env: {} });
    expect(offline.stderr).toBe("");
    expect(offline.code).toBe(0);
  });

  it("a windowed export of one tenant widens to its checkpoints and still verifies; stdout JSONL is the same bytes", async () => {
    const window = await audit("export", "--tenant", "globex", "--since", "5h", "--until", "2h");
    expect(window.code).toBe(0);
    writeFileSync(path.join(dir, "window.jsonl"), window.stdout);
    const records = window.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; event?: ActivityRecord });
    expect(records.every((record) => record.type === "checkpoint" || record.event?.tenantId === "globex")).toBe(true);
    // One checkpoint covers all 12 events, so the window widens to the whole chain.
    expect(records.filter((record) => record.type === "event")).toHaveLength(12);
    const offline = await audit("verify", "--file", "window.jsonl", "--public-key", publicKey);
    expect(offline.code).toBe(0);
    const line = window.stdout.split("\n").find((text) => text.includes("calc"))!;
    expect((JSON.parse(line) as { event: ActivityRecord }).event.errorClass).toBe("=cmd|' /C calc'!A0 \u202e");
  });

  it("csv has a header, one row per record, and keeps formulas as text", async () => {
    const csv = await audit("export", "--format", "csv", "--tenant", "acme");
    expect(csv.code).toBe(0);
    const rows = csv.stdout.trim().split("\n");
    expect(rows[0]).toMatch(/^type,tenantId,id,at,kind,/);
    expect(rows).toHaveLength(1 + 1 + 12);
    expect(rows.find((row) => row.includes("calc"))).toContain(",'=cmd|' /C calc'!A0 ");
  });

  it("an export edited by one line fails offline, naming the event; a wrong key or no key is refused", async () => {
    const text = readFileSync(path.join(dir, "all.jsonl"), "utf8");
    const target = events.find((record) => record.tenantId === "acme" && record.actorUserId === "user-5")!;
    writeFileSync(path.join(dir, "edited.jsonl"), text.replace(`"id":"${target.id}"`, `"id":"${target.id}","targetId":"added"`));
    const edited = await audit("verify", "--file", "edited.jsonl", "--public-key", publicKey);
    expect(edited.code).toBe(1);
    expect(edited.stderr).toContain(`tenant acme: changed at event ${target.id}`);

    const stranger = `ed25519:${Buffer.alloc(32, 1).toString("base64url")}`;
    const wrongKey = await audit("verify", "--file", "all.jsonl", "--public-key", stranger);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain("bad-signature");
    expect((await audit("verify", "--file", "all.jsonl")).code).toBe(2);
    expect((await audit("verify", "--file", "all.jsonl", "--public-key", "nope")).stderr).toContain("is not a checkpoint public key");
  });

  it("one activity row edited in the database makes verify fail and name it", async () => {
    const target = events.find((record) => record.tenantId === "globex" && record.actorUserId === "user-7")!;
    const db = new Database(path.join(dir, "audit.db"));
    try {
      db.prepare("UPDATE activity SET outcome = 'denied' WHERE tenant_id = ? AND id = ?").run("globex", target.id);
    } finally {
      db.close();
    }
    const verified = await audit("verify");
    expect(verified.code).toBe(1);
    expect(verified.stderr).toContain(`tenant globex: changed at event ${target.id}: event ${target.id} (chain position 8) was changed`);
    // Without the storage key, verify needs the public key.
    const { TOOLPACT_STORAGE_KEY: _key, ...withoutKey } = env;
    const noKey = await runMain(["audit", "verify"], { cwd: dir, env: withoutKey });
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toContain("the storage key is not set");
    const withPublic = await runMain(["audit", "verify", "--public-key", publicKey], { cwd: dir, env: withoutKey });
    expect(withPublic.code).toBe(1);
    expect(withPublic.stderr).toContain(target.id);
  });

  it("usage: no action, an unknown action, a bad time", async () => {
    expect((await audit()).code).toBe(2);
    expect((await audit("erase")).stderr).toContain('unknown action "erase"');
    expect((await audit("export", "--since", "yesterday")).stderr).toContain('--since "yesterday" is neither');
  });
});
