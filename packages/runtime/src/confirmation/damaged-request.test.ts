/** Codes that say what happened: a damaged stored request is STORED_DATA_DAMAGED, a closed runtime SHUTTING_DOWN; neither is a database outage. */
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { NOTES, TENANT, UNTRUSTED, createFixture, rejection, type RuntimeFixture } from "../testing/fixtures.js";

const create = { providerId: NOTES, tool: "create-record", version: 1 };
let fx: RuntimeFixture | undefined;
afterEach(async () => {
  await fx?.dispose();
  fx = undefined;
});

describe("honest codes for what is not an outage", () => {
  it("an approved request whose stored tool name no longer parses is STORED_DATA_DAMAGED, not STORE_UNAVAILABLE", async () => {
    fx = await createFixture({ runtime: { publicUrl: "https://toolpact.example.test", recoveryIntervalMs: 0 } });
    const caller = await fx.principal(UNTRUSTED);
    const preview = await fx.runtime.preview(caller, create, { title: "plan" });
    if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
    const { requestId } = preview.confirmation;
    await fx.runtime.decideConfirmation({ tenantId: TENANT, userId: "alice" }, requestId, "approve");
    const db = new Database(fx.dbPath);
    db.prepare("UPDATE confirmation_requests SET tool = 'not a tool name' WHERE request_id = ?").run(requestId);
    db.close();
    const error = await rejection(fx.runtime.getConfirmation(caller, requestId));
    expect(error.code).toBe("STORED_DATA_DAMAGED");
    expect(error.message).toContain(`the stored confirmation request ${requestId} names no valid tool`);
  });

  it("a call to a runtime that is closing is SHUTTING_DOWN", async () => {
    fx = await createFixture({ runtime: { recoveryIntervalMs: 0 } });
    const caller = await fx.principal(UNTRUSTED);
    await fx.runtime.close();
    const error = await rejection(fx.runtime.execute(caller, { providerId: NOTES, tool: "search-records" }, { query: "x" }));
    expect(error.code).toBe("SHUTTING_DOWN");
    expect(error.message).toContain("shutting down");
  });
});
