/**
 * The runtime's task service (what MCP's `io.modelcontextprotocol/tasks` rests on), on a real SQLite
 * file: approval as input_required, the call run once after approval, decline and denial (nothing ran),
 * cancel before and after the call began, tasks visible only to their caller and user, and a task that
 * survives a restart (a new runtime on the same file moves it on, by a `get` or by its sweep alone).
 */
import { afterEach, describe, expect, it } from "vitest";
import { ended, pollTask } from "./support/task-polls.js";
import type { Principal } from "../../packages/runtime/src/index.js";
import {
  ASSISTANT,
  NOTES,
  OTHER_TENANT,
  TENANT,
  UNTRUSTED,
  configureTenant,
  createFixture,
  rejection,
  type FixtureOptions,
  type RuntimeFixture,
} from "../../packages/runtime/src/testing/fixtures.js";

const PUBLIC_URL = "https://toolpact.example.test";
const create = { providerId: NOTES, tool: "create-record", version: 1 };
const search = { providerId: NOTES, tool: "search-records" };
const hold = { providerId: NOTES, tool: "hold-read" };
const alice = { tenantId: TENANT, userId: "alice" };

let fx: RuntimeFixture;
let caller: Principal;

async function setup(options: FixtureOptions = {}): Promise<void> {
  fx = await createFixture({ ...options, runtime: { publicUrl: PUBLIC_URL, recoveryIntervalMs: 0, ...options.runtime } });
  caller = await fx.principal(UNTRUSTED);
}
afterEach(async () => {
  await fx?.dispose();
});

/** How many times the notes provider ran `tool`. */
const executed = (tool: string) => fx.handlers.executed.filter((call) => call.tool === tool).length;

describe("a task for a call that needs the user's approval", () => {
  it("waits as input_required with the confirmation page, then runs once after approval and keeps the result", async () => {
    await setup();
    const started = await fx.runtime.tasks.start(caller, create, { title: "Q3 plan" });
    expect(started).toMatchObject({ status: "input_required", effectBegun: false, tool: `${NOTES}:create-record@1`, pollIntervalMs: 1000 });
    expect(started.taskId).toMatch(/^[0-9a-f]{48}$/);
    const requestId = started.confirmation!.requestId;
    expect(started.confirmation!.confirmUrl).toBe(`${PUBLIC_URL}/confirm/${requestId}`);
    expect(executed("create-record")).toBe(0);

    await fx.runtime.decideConfirmation(alice, requestId, "approve");
    const done = await pollTask(fx.runtime, caller, started.taskId, ended);
    expect(done).toMatchObject({ status: "completed", effectBegun: true, outcome: { ok: true, result: { id: "rec-1" } } });
    expect(done.operationId).toBe(done.outcome?.ok === true ? done.outcome.operationId : "none");
    expect((await fx.runtime.getOperation(caller, done.operationId!)).state).toBe("succeeded");
    // Asking again answers the kept outcome; the provider never runs twice.
    for (let i = 0; i < 3; i++) expect((await fx.runtime.tasks.get(caller, started.taskId)).outcome).toEqual(done.outcome);
    expect(executed("create-record")).toBe(1);
  });

  it("many polls racing right after approval, here and on a second runtime on the file, run the call once", async () => {
    await setup();
    const second = await fx.reopen();
    const started = await fx.runtime.tasks.start(caller, create, { title: "raced" });
    await fx.runtime.decideConfirmation(alice, started.confirmation!.requestId, "approve");
    const polls = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? fx.runtime : second).tasks.get(caller, started.taskId));
    await Promise.all(polls);
    const done = await pollTask(second, caller, started.taskId, ended);
    expect(done).toMatchObject({ status: "completed", outcome: { ok: true } });
    expect(executed("create-record")).toBe(1);
  });

  it("a denial on the page ends the task as failed (CONFIRMATION_DENIED) and nothing runs", async () => {
    await setup();
    const started = await fx.runtime.tasks.start(caller, create, { title: "no" });
    await fx.runtime.decideConfirmation(alice, started.confirmation!.requestId, "deny");
    const done = await pollTask(fx.runtime, caller, started.taskId, ended);
    expect(done).toMatchObject({ status: "failed", effectBegun: false, outcome: { ok: false, code: "CONFIRMATION_DENIED" } });
    expect(done.outcome?.ok === false && done.outcome.message).toContain("nothing ran");
    expect(executed("create-record")).toBe(0);
  });

  it("tasks.answer: accept keeps it waiting for the page's decision; decline withdraws the request and nothing runs", async () => {
    await setup();
    const accepted = await fx.runtime.tasks.start(caller, create, { title: "accepted" });
    const key = accepted.confirmation!.requestId;
    // An answer to another key changes nothing.
    expect((await fx.runtime.tasks.answer(caller, accepted.taskId, { requestId: "not-the-key", action: "decline" })).status).toBe("input_required");
    const waiting = await fx.runtime.tasks.answer(caller, accepted.taskId, { requestId: key, action: "accept" });
    expect(waiting).toMatchObject({ status: "working", effectBegun: false });
    expect(waiting.confirmation).toBeUndefined();
    await fx.runtime.decideConfirmation(alice, key, "approve");
    expect(await pollTask(fx.runtime, caller, accepted.taskId, ended)).toMatchObject({ status: "completed" });

    const declined = await fx.runtime.tasks.start(caller, create, { title: "declined" });
    const declinedKey = declined.confirmation!.requestId;
    const answer = await fx.runtime.tasks.answer(caller, declined.taskId, { requestId: declinedKey, action: "decline" });
    expect(answer).toMatchObject({ status: "failed", outcome: { ok: false, code: "CONFIRMATION_DENIED" } });
    expect(await fx.runtime.getConfirmation(caller, declinedKey)).toEqual({ status: "cancelled" });
    // The person can no longer approve what the client declined.
    await expect(fx.runtime.decideConfirmation(alice, declinedKey, "approve")).rejects.toThrow();
    expect(fx.handlers.executed.map((call) => (call.input as { title: string }).title)).toEqual(["accepted"]);
  });

  it("the request expiring, or the task's time to live passing, ends it: nothing ran", async () => {
    await setup();
    const expiring = await fx.runtime.tasks.start(caller, create, { title: "too late" });
    fx.advance(301_000);
    expect(await fx.runtime.tasks.get(caller, expiring.taskId)).toMatchObject({ status: "failed", outcome: { ok: false, code: "CONFIRMATION_EXPIRED" } });

    const outlived = await fx.runtime.tasks.start(caller, create, { title: "outlived" }, { ttlMs: 10_000 });
    fx.advance(11_000);
    const gone = await fx.runtime.tasks.get(caller, outlived.taskId);
    expect(gone).toMatchObject({ status: "cancelled", effectBegun: false });
    expect(gone.statusMessage).toContain("expired");
    expect(await fx.runtime.getConfirmation(caller, outlived.confirmation!.requestId)).toEqual({ status: "cancelled" });
    expect(executed("create-record")).toBe(0);
  });

  it("a token-mode decision is never taken by a task: it fails and nothing runs", async () => {
    await setup();
    const trusted = await fx.principal(ASSISTANT);
    const started = await fx.runtime.tasks.start(trusted, create, { title: "trusted" });
    expect(started).toMatchObject({ status: "failed", outcome: { ok: false, code: "PERMISSION_DENIED" } });
    expect(executed("create-record")).toBe(0);
  });
});

describe("a task for a call that needs no approval", () => {
  it("runs in the background and completes; a refused call ends as failed with the toolpact code", async () => {
    await setup();
    const started = await fx.runtime.tasks.start(caller, search, { query: "q" }, { requiresConfirmation: false });
    expect(started.status).toBe("working");
    expect(await pollTask(fx.runtime, caller, started.taskId, ended)).toMatchObject({ status: "completed", outcome: { ok: true, result: { hits: ["q"] } } });

    const invalid = await fx.runtime.tasks.start(caller, search, { query: 42 }, { requiresConfirmation: false });
    expect(await pollTask(fx.runtime, caller, invalid.taskId, ended)).toMatchObject({ status: "failed", outcome: { ok: false, code: "INPUT_INVALID" } });
  });

  it("a gate or policy that still demands approval sends it the confirmed way: input_required, nothing ran", async () => {
    await setup();
    // The listing said no confirmation (a stale listing): the execute refuses, and the task asks instead.
    const started = await fx.runtime.tasks.start(caller, create, { title: "stale listing" }, { requiresConfirmation: false });
    const asking = await pollTask(fx.runtime, caller, started.taskId, (task) => task.status !== "working");
    expect(asking).toMatchObject({ status: "input_required", effectBegun: false });
    expect(executed("create-record")).toBe(0);
  });
});

describe("cancelling a task", () => {
  it("before approval: withdraws the confirmation request, the task is cancelled, and nothing runs", async () => {
    await setup();
    const started = await fx.runtime.tasks.start(caller, create, { title: "cancel me" });
    const requestId = started.confirmation!.requestId;
    const answer = await fx.runtime.tasks.cancel(caller, started.taskId);
    expect(answer).toMatchObject({ effectBegun: false, task: { status: "cancelled" } });
    expect(answer.message).toContain("nothing ran");
    expect(await fx.runtime.getConfirmation(caller, requestId)).toEqual({ status: "cancelled" });
    await expect(fx.runtime.decideConfirmation(alice, requestId, "approve")).rejects.toThrow();
    expect((await fx.runtime.tasks.get(caller, started.taskId)).status).toBe("cancelled");
    expect(executed("create-record")).toBe(0);
  });

  it("after the call began: says the effect is not undone, and the task still ends with the call's outcome", async () => {
    await setup();
    const started = await fx.runtime.tasks.start(caller, hold, { title: "slow" }, { requiresConfirmation: false });
    const running = await pollTask(fx.runtime, caller, started.taskId, () => fx.handlers.release !== undefined);
    expect(running).toMatchObject({ status: "working", effectBegun: true });
    const answer = await fx.runtime.tasks.cancel(caller, started.taskId);
    expect(answer.effectBegun).toBe(true);
    expect(answer.message).toContain("not undone");
    expect(answer.task).toMatchObject({ status: "working", cancelRequested: true });
    fx.handlers.release!();
    const done = await pollTask(fx.runtime, caller, started.taskId, ended);
    expect(done).toMatchObject({ status: "completed", cancelRequested: true, outcome: { ok: true, result: { late: true } } });
    expect(executed("hold-read")).toBe(1);
  });

  it("after it ended: changes nothing", async () => {
    await setup();
    const started = await fx.runtime.tasks.start(caller, search, { query: "done" }, { requiresConfirmation: false });
    await pollTask(fx.runtime, caller, started.taskId, ended);
    const answer = await fx.runtime.tasks.cancel(caller, started.taskId);
    expect(answer.task.status).toBe("completed");
    expect(answer.message).toContain("already ended");
  });
});

describe("who may see a task", () => {
  it("only the caller plugin and user that started it: everyone else gets the refusal an unknown id gets", async () => {
    await setup();
    await configureTenant(fx.runtime, OTHER_TENANT);
    const started = await fx.runtime.tasks.start(caller, create, { title: "mine" });
    const unknown = await rejection(fx.runtime.tasks.get(caller, "0".repeat(48)));
    expect(unknown.code).toBe("PERMISSION_DENIED");
    const strangers = {
      "another user": await fx.principal(UNTRUSTED, { sub: "bob" }),
      "another caller plugin": await fx.principal(ASSISTANT),
      "another tenant": await fx.principal(UNTRUSTED, { tid: OTHER_TENANT }),
    };
    for (const [who, stranger] of Object.entries(strangers)) {
      for (const attempt of [
        fx.runtime.tasks.get(stranger, started.taskId),
        fx.runtime.tasks.answer(stranger, started.taskId, { requestId: started.confirmation!.requestId, action: "decline" }),
        fx.runtime.tasks.cancel(stranger, started.taskId),
      ]) {
        const refused = await rejection(attempt);
        expect(refused.code, who).toBe("PERMISSION_DENIED");
        expect(refused.message.replace(started.taskId, "ID"), who).toBe(unknown.message.replace("0".repeat(48), "ID"));
      }
    }
    // None of those attempts touched it.
    expect((await fx.runtime.tasks.get(caller, started.taskId)).status).toBe("input_required");
    expect(await fx.runtime.getConfirmation(caller, started.confirmation!.requestId)).toMatchObject({ status: "pending" });
  });

  it("bounds the open tasks one caller holds for one user: the next is RATE_LIMITED, other users are not affected", async () => {
    await setup();
    const now = fx.now();
    for (let i = 0; i < 64; i++) {
      await fx.store.insertTask({
        tenantId: TENANT,
        taskId: `${i}`.padStart(48, "f"),
        callerPluginId: UNTRUSTED,
        actorUserId: "alice",
        tool: `${NOTES}:create-record@1`,
        status: "working",
        begun: false,
        createdAt: now,
        updatedAt: now,
        expiresAt: now + 60_000,
        driver: "elsewhere",
        driverUntil: now + 60_000,
        revision: 0,
        sealedCall: new Uint8Array([0]),
      });
    }
    const refused = await rejection(fx.runtime.tasks.start(caller, search, { query: "one more" }, { requiresConfirmation: false }));
    expect(refused.code).toBe("RATE_LIMITED");
    expect(refused.message).toContain("64 open tasks");
    const bob = await fx.principal(UNTRUSTED, { sub: "bob" });
    expect((await fx.runtime.tasks.start(bob, search, { query: "bob's" }, { requiresConfirmation: false })).status).toBe("working");
  });

  it("a malformed task id is INPUT_INVALID before any store query, and a malformed ref never becomes a task", async () => {
    await setup();
    for (const bad of ["", "x".repeat(200), "a b", "a\u0000b"]) {
      expect((await rejection(fx.runtime.tasks.get(caller, bad))).code).toBe("INPUT_INVALID");
    }
    expect((await rejection(fx.runtime.tasks.start(caller, { providerId: "Not An Id", tool: "x" }, {}))).code).toBe("PROVIDER_NOT_FOUND");
    expect((await rejection(fx.runtime.tasks.start(caller, { providerId: NOTES, tool: "x".repeat(500) }, {}))).code).toBe("TOOL_NOT_FOUND");
  });

  it("keeps the input and the outcome sealed: neither reaches the database file in plaintext", async () => {
    await setup();
    const started = await fx.runtime.tasks.start(caller, search, { query: "secret-needle-4711" }, { requiresConfirmation: false });
    await pollTask(fx.runtime, caller, started.taskId, ended);
    await fx.runtime.close();
    const { readFileSync, existsSync } = await import("node:fs");
    for (const file of [fx.dbPath, `${fx.dbPath}-wal`]) {
      if (existsSync(file)) expect(readFileSync(file).includes("secret-needle-4711")).toBe(false);
    }
  });
});

describe("a task across a restart (a new runtime on the same SQLite file)", () => {
  it("approved while the first runtime is gone: the new runtime's get runs it once", async () => {
    await setup();
    const started = await fx.runtime.tasks.start(caller, create, { title: "survives" });
    await fx.runtime.close();

    const second = await fx.reopen();
    // The person approves on the new instance's page; the agent asks again after its own reconnect.
    await second.decideConfirmation(alice, started.confirmation!.requestId, "approve");
    const done = await pollTask(second, caller, started.taskId, ended);
    expect(done).toMatchObject({ status: "completed", outcome: { ok: true, result: { id: "rec-1" } } });
    expect(executed("create-record")).toBe(1);
  });

  it("nobody polls: the new runtime's sweep picks the task up after approval and runs it", async () => {
    await setup();
    const started = await fx.runtime.tasks.start(caller, create, { title: "swept" });
    await fx.runtime.close();
    // A second runtime on the file decides (as the page would), a third one only sweeps.
    const page = await fx.reopen();
    await page.decideConfirmation(alice, started.confirmation!.requestId, "approve");
    await page.close();
    const swept = await fx.reopen({ recoveryIntervalMs: 50 });
    for (let wait = 0; wait < 200 && executed("create-record") === 0; wait++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(executed("create-record")).toBe(1);
    const done = await pollTask(swept, caller, started.taskId, ended);
    expect(done).toMatchObject({ status: "completed", outcome: { ok: true } });
    expect(executed("create-record")).toBe(1);
  });

  it("a call that was running when its runtime went away is taken over and not run twice", async () => {
    await setup({ runtime: { leaseMs: 1000 } });
    const started = await fx.runtime.tasks.start(caller, create, { title: "taken over" });
    await fx.runtime.decideConfirmation(alice, started.confirmation!.requestId, "approve");
    const done = await pollTask(fx.runtime, caller, started.taskId, ended);
    expect(done.status).toBe("completed");
    // Make the row look as if its driver died mid-call after the effect: a new runtime replays the
    // recorded outcome under the task's idempotency key instead of running the call again.
    const record = (await fx.store.getTask(TENANT, started.taskId))!;
    const { sealedOutcome: _outcome, operationId: _operationId, driver: _driver, ...rest } = record;
    expect(await fx.store.replaceTask({ ...rest, status: "working", driverUntil: 0, revision: record.revision + 1 }, record.revision)).toBe(true);
    await fx.runtime.close();
    const second = await fx.reopen();
    const again = await pollTask(second, caller, started.taskId, ended);
    expect(again).toMatchObject({ status: "completed", operationId: done.operationId, outcome: done.outcome });
    expect(executed("create-record")).toBe(1);
  });
});
