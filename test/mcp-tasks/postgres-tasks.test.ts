/**
 * Tasks on PostgreSQL with two runtimes sharing one schema (two instances): a task started on one is
 * visible on the other, the person approves through the other, and the call runs once whichever
 * instance moves it; a cancel on one instance withdraws the request the other sees; a restart of both
 * loses nothing. Needs TOOLPACT_TEST_PG_URL; without it the file is skipped with one line saying so.
 */
import { describe, expect, it } from "vitest";
import { ended, pollTask } from "./support/task-polls.js";
import type { Principal, ToolpactRuntime } from "../../packages/runtime/src/index.js";
import { postgresTestGate } from "../../packages/runtime/src/testing/index.js";
import { usePostgresHarness } from "../../packages/runtime/src/testing/postgres-harness.js";
import { NOTES, TENANT, UNTRUSTED, createFixture, type RuntimeFixture } from "../../packages/runtime/src/testing/fixtures.js";

const gate = await postgresTestGate("Tasks on two runtimes sharing PostgreSQL");
const create = { providerId: NOTES, tool: "create-record", version: 1 };
const alice = { tenantId: TENANT, userId: "alice" };

describe.skipIf(gate.skip !== undefined)("tasks on two runtimes sharing one PostgreSQL schema", () => {
  const harness = usePostgresHarness(gate);

  async function twoInstances(): Promise<{ fx: RuntimeFixture; first: ToolpactRuntime; second: ToolpactRuntime; caller: Principal }> {
    const schema = harness.freshSchema();
    const fx = await createFixture({
      openStore: () => harness.open({ schema }),
      runtime: { publicUrl: "https://toolpact.example.test", recoveryIntervalMs: 0 },
    });
    const second = await fx.reopen();
    return { fx, first: fx.runtime, second, caller: await fx.principal(UNTRUSTED) };
  }

  it("started on one, seen and approved through the other, run once", async () => {
    const { fx, first, second, caller } = await twoInstances();
    try {
      const started = await first.tasks.start(caller, create, { title: "shared" });
      expect(await second.tasks.get(caller, started.taskId)).toMatchObject({ status: "input_required", confirmation: started.confirmation });
      await second.decideConfirmation(alice, started.confirmation!.requestId, "approve");
      // Both instances are asked while the call runs; one of them runs it.
      const [a, b] = await Promise.all([pollTask(first, caller, started.taskId, ended), pollTask(second, caller, started.taskId, ended)]);
      expect(a).toMatchObject({ status: "completed", outcome: { ok: true } });
      expect(b.outcome).toEqual(a.outcome);
      expect(fx.handlers.executed.filter((call) => call.tool === "create-record")).toHaveLength(1);
    } finally {
      await fx.dispose();
    }
  });

  it("cancelled on one instance: the other sees it cancelled, the request withdrawn, and nothing runs", async () => {
    const { fx, first, second, caller } = await twoInstances();
    try {
      const started = await first.tasks.start(caller, create, { title: "cancelled" });
      expect((await second.tasks.cancel(caller, started.taskId)).effectBegun).toBe(false);
      expect((await first.tasks.get(caller, started.taskId)).status).toBe("cancelled");
      expect(await first.getConfirmation(caller, started.confirmation!.requestId)).toEqual({ status: "cancelled" });
      await expect(first.decideConfirmation(alice, started.confirmation!.requestId, "approve")).rejects.toThrow();
      expect(fx.handlers.executed).toHaveLength(0);
    } finally {
      await fx.dispose();
    }
  });

  it("both instances restart while the task waits: a third runtime on the schema finishes it", async () => {
    const { fx, first, second, caller } = await twoInstances();
    try {
      const started = await first.tasks.start(caller, create, { title: "restart" });
      await Promise.all([first.close(), second.close()]);
      const third = await fx.reopen();
      await third.decideConfirmation(alice, started.confirmation!.requestId, "approve");
      expect(await pollTask(third, caller, started.taskId, ended)).toMatchObject({ status: "completed", outcome: { ok: true } });
      expect(fx.handlers.executed).toHaveLength(1);
    } finally {
      await fx.dispose();
    }
  });
});
