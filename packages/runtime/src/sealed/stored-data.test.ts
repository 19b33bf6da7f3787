import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Principal } from "../api.js";
import { PayloadCipher } from "./payload-cipher.js";
import { ASSISTANT, NOTES, TENANT, eachTestFixtureWithAlice, rejection, type RuntimeFixture } from "../testing/fixtures.js";

let fx: RuntimeFixture;
let alice: Principal;
eachTestFixtureWithAlice((made) => ({ fx, alice } = made));

function databaseBytes(): Buffer {
  const parts = [fx.dbPath, `${fx.dbPath}-wal`, `${fx.dbPath}-shm`].filter((path) => existsSync(path)).map((path) => readFileSync(path));
  return Buffer.concat(parts);
}

describe("stored data", () => {
  it("never writes a plaintext input, output or provider error message to the database, its WAL or the logs", async () => {
    const canary = `CANARY-${randomUUID()}`;
    const create = { providerId: NOTES, tool: "create-record", version: 1 };
    const summary = { providerId: NOTES, tool: "send-summary" };
    const confirm = async (ref: typeof create | typeof summary, input: unknown) =>
      ((await fx.runtime.preview(alice, ref, input)).confirmation as { token: string }).token;

    // inputs (confirmed write, kept-for-recovery external tool), outputs (recorded for replay), provider messages
    const createInput = { title: `${canary} plan` };
    await fx.runtime.execute(alice, create, createInput, {
      confirmationToken: await confirm(create, createInput),
      idempotencyKey: `key-${canary}`,
    });
    const summaryInput = { title: canary };
    const sent = await fx.runtime.execute(alice, summary, summaryInput, {
      confirmationToken: await confirm(summary, summaryInput),
      idempotencyKey: "summary",
    });
    expect(sent.result).toEqual({ sent: canary });
    const searched = await fx.runtime.execute(alice, { providerId: NOTES, tool: "search-records" }, { query: canary }, { idempotencyKey: "s" });
    expect(searched.result).toEqual({ hits: [canary] });
    await rejection(fx.runtime.execute(alice, { providerId: NOTES, tool: "explode" }, { title: canary }));
    await rejection(fx.runtime.execute(alice, { providerId: NOTES, tool: "search-records" }, { query: canary, extra: canary }));
    await rejection(fx.runtime.execute(alice, create, { title: canary }, { confirmationToken: "x" }));
    await rejection(fx.runtime.execute(alice, { providerId: NOTES, tool: "bad-output" }, { title: canary }));
    await rejection(
      fx.runtime.execute(
        alice,
        { providerId: NOTES, tool: "slow-write" },
        { title: canary },
        {
          confirmationToken: await confirm({ providerId: NOTES, tool: "slow-write" } as typeof summary, { title: canary }),
        },
      ),
    );

    // The canary did reach the store, sealed: the recorded result opens with the storage key.
    const record = await fx.store.findIdempotency(
      {
        tenantId: TENANT,
        callerPluginId: ASSISTANT,
        actorUserId: "alice",
        tool: `${NOTES}:search-records@1`,
        keyHash: (await import("node:crypto")).createHash("sha256").update("s").digest("base64url"),
      },
      fx.now(),
    );
    expect(record?.sealedResult).toBeDefined();
    const opened = new PayloadCipher(fx.storageKey).open(record!.sealedResult!, `toolpact:idempotency-result:${TENANT}:${record!.operationId}`);
    expect(opened).toContain(canary);

    const bytes = databaseBytes();
    expect(bytes.includes(Buffer.from(`${NOTES}:search-records@1`))).toBe(true);
    expect(bytes.includes(Buffer.from(canary))).toBe(false);
    expect(JSON.stringify(fx.logs)).not.toContain(canary);
    const activity = JSON.stringify(await fx.runtime.admin.listActivity(TENANT, { limit: 1000 }));
    expect(activity).not.toContain(canary);

    await fx.runtime.close();
    expect(readFileSync(fx.dbPath).includes(Buffer.from(canary))).toBe(false);
  });

  it("keeps the input of an idempotent-recovery tool sealed while it runs, and drops it at settle", async () => {
    const summary = { providerId: NOTES, tool: "send-summary" };
    const input = { title: "kept" };
    const preview = await fx.runtime.preview(alice, summary, input);
    const { operationId } = await fx.runtime.execute(alice, summary, input, {
      confirmationToken: (preview.confirmation as { token: string }).token,
    });
    const operation = await fx.store.getOperation(TENANT, operationId);
    expect(operation?.state).toBe("succeeded");
    expect(operation?.sealedInput).toBeUndefined();
  });

  it("refuses a sealed payload moved to another row", () => {
    const cipher = new PayloadCipher(fx.storageKey);
    const sealed = cipher.seal("secret", "row-1");
    expect(cipher.open(sealed, "row-1")).toBe("secret");
    expect(() => cipher.open(sealed, "row-2")).toThrow(/did not decrypt/);
    const tampered = Uint8Array.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => cipher.open(tampered, "row-1")).toThrow(/did not decrypt/);
    // damaged data is the operator's matter, not a database outage to wait out
    expect(() => cipher.open(tampered, "row-1")).toThrow(expect.objectContaining({ code: "STORED_DATA_DAMAGED" }));
    expect(() => cipher.open(new Uint8Array([9, 1, 2]), "row-1")).toThrow(expect.objectContaining({ code: "STORED_DATA_DAMAGED" }));
    expect(cipher.seal("secret", "row-1")).not.toEqual(sealed);
  });
});
