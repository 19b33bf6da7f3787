/** Tasks (migration 8): part of the store contract suite. Every write after the insert is a compare-and-set. */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { TaskRecord } from "../../store/store.js";
import { NOW } from "../sample-records.js";
import type { StoreContractKit } from "./kit.js";

/** A waiting task of `tenantId` (revision 0). */
function sampleTask(tenantId: string, overrides: Partial<TaskRecord> = {}): TaskRecord {
  return {
    tenantId,
    taskId: randomBytes(24).toString("hex"),
    callerPluginId: "com.example.caller",
    actorUserId: "user-1",
    keyId: "key-1",
    tool: "com.example.notes:create-record@1",
    status: "input_required",
    statusMessage: "waiting",
    confirmationId: randomBytes(8).toString("hex"),
    confirmUrl: "https://toolpact.example.test/confirm/x",
    begun: false,
    createdAt: NOW,
    updatedAt: NOW,
    expiresAt: NOW + 3_600_000,
    driverUntil: NOW + 2000,
    revision: 0,
    sealedCall: new Uint8Array([1, 2, 3]),
    ...overrides,
  };
}

/** Registers the task tests of the store contract. */
export function describeTasks(kit: StoreContractKit): void {
  const { open, openPeer, tenant } = kit;
  describe("tasks", () => {
    it("keeps a task as written, per tenant, and finds it by its confirmation request", async () => {
      const { store } = await open();
      const t = tenant();
      const task = sampleTask(t);
      await store.insertTask(task);
      expect(await store.getTask(t, task.taskId)).toEqual({ ...task, sealedCall: expect.any(Uint8Array) });
      expect(Buffer.from((await store.getTask(t, task.taskId))!.sealedCall)).toEqual(Buffer.from([1, 2, 3]));
      expect(await store.getTask(tenant(), task.taskId)).toBeUndefined();
      expect((await store.findTaskByConfirmation(t, task.confirmationId!))?.taskId).toBe(task.taskId);
      expect(await store.findTaskByConfirmation(tenant(), task.confirmationId!)).toBeUndefined();
    });

    it("writes over a task only at the expected revision: of two racing writes, on any instances, one wins", async () => {
      const fixture = await open();
      const { store } = fixture;
      const t = tenant();
      const task = sampleTask(t);
      await store.insertTask(task);
      const begun: TaskRecord = { ...task, status: "working", begun: true, driver: "instance-a", revision: 1 };
      expect(await store.replaceTask(begun, 0)).toBe(true);
      expect(await store.replaceTask({ ...task, status: "cancelled", revision: 1 }, 0)).toBe(false);
      expect(await store.getTask(t, task.taskId)).toMatchObject({ status: "working", begun: true, driver: "instance-a", revision: 1 });
      const peer = (await openPeer(fixture)) ?? store;
      const done = { ...begun, status: "completed" as const, sealedOutcome: new Uint8Array([9]), operationId: "op-1", revision: 2 };
      const answers = await Promise.all([store.replaceTask(done, 1), peer.replaceTask({ ...begun, status: "cancelled", revision: 2 }, 1)]);
      expect(answers.filter(Boolean)).toHaveLength(1);
    });

    it("counts the open tasks of one caller and user", async () => {
      const { store } = await open();
      const t = tenant();
      for (const status of ["working", "input_required", "completed", "cancelled"] as const) await store.insertTask(sampleTask(t, { status }));
      await store.insertTask(sampleTask(t, { actorUserId: "user-2" }));
      expect(await store.countOpenTasks(t, "com.example.caller", "user-1")).toBe(2);
      expect(await store.countOpenTasks(t, "com.example.other", "user-1")).toBe(0);
      expect(await store.countOpenTasks(tenant(), "com.example.caller", "user-1")).toBe(0);
    });

    it("lists open tasks whose driver's claim lapsed, in any tenant; prune deletes ended ones past their time to live", async () => {
      const { store } = await open();
      const lapsed = sampleTask(tenant(), { driverUntil: NOW - 1 });
      const claimed = sampleTask(tenant(), { driverUntil: NOW + 60_000 });
      const ended = sampleTask(tenant(), { status: "completed", driverUntil: 0, expiresAt: NOW - 1 });
      for (const task of [lapsed, claimed, ended]) await store.insertTask(task);
      const listed = (await store.listOpenTasks(NOW, 1000)).map((task) => task.taskId);
      expect(listed).toContain(lapsed.taskId);
      expect(listed).not.toContain(claimed.taskId);
      expect(listed).not.toContain(ended.taskId);
      const pruned = await store.prune({ now: NOW, activityBefore: 0 });
      expect(pruned.tasks).toBeGreaterThanOrEqual(1);
      expect(await store.getTask(ended.tenantId, ended.taskId)).toBeUndefined();
      expect(await store.getTask(lapsed.tenantId, lapsed.taskId)).toBeDefined();
    });
  });
}
