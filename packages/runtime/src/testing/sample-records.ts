/** Sample records for store tests (the contract suite and the PostgreSQL store's own tests): fixed times, fresh ids. */
import { randomUUID } from "node:crypto";
import { uuidv7 } from "../ids.js";
import type { ActivityRecord, ConfirmationRecord, OperationRecord, OperationSettle } from "../store/store.js";

/** The fixed "now" of the samples, Unix ms. */
export const NOW = 1_750_000_000_000;

/** A running operation of `tenantId`, created at NOW under instance-a's lease. */
export function sampleOperation(tenantId: string, overrides: Partial<OperationRecord> = {}): OperationRecord {
  return {
    tenantId,
    operationId: uuidv7(NOW),
    callerPluginId: "com.example.caller",
    actorUserId: "user-1",
    providerPluginId: "com.example.notes",
    tool: "com.example.notes:create-record@1",
    state: "running",
    createdAt: NOW,
    leaseOwner: "instance-a",
    leaseEpoch: 1,
    leaseExpiresAt: NOW + 30_000,
    ...overrides,
  };
}

/** A call event of `tenantId` at NOW with only the required columns and the actor set (the rest stay NULL). */
export function sampleActivity(tenantId: string, overrides: Partial<ActivityRecord> = {}): ActivityRecord {
  return {
    id: uuidv7(overrides.at ?? NOW),
    tenantId,
    at: NOW,
    kind: "call",
    actorUserId: "user-1",
    phase: "execute",
    outcome: "succeeded",
    ...overrides,
  };
}

/** A settle of `op` to succeeded at NOW + 10 under its own lease, with `activity` as its event. */
export function sampleSettle(op: OperationRecord, activity: ActivityRecord, overrides: Partial<OperationSettle> = {}): OperationSettle {
  return {
    tenantId: op.tenantId,
    operationId: op.operationId,
    leaseOwner: op.leaseOwner,
    leaseEpoch: op.leaseEpoch,
    state: "succeeded",
    settledAt: NOW + 10,
    activity,
    ...overrides,
  };
}

/** A pending platform confirmation request of `tenantId`, created at NOW, live for five minutes, with a sealed preview. */
export function sampleConfirmation(tenantId: string, overrides: Partial<ConfirmationRecord> = {}): ConfirmationRecord {
  return {
    tenantId,
    requestId: randomUUID(),
    tool: "com.example.notes:create-record@1",
    providerPluginId: "com.example.notes",
    callerPluginId: "com.example.caller",
    actorUserId: "user-1",
    digest: "dig",
    digestKid: "k1",
    schemaHash: "sch",
    effect: "write",
    mode: "platform",
    status: "pending",
    createdAt: NOW,
    expiresAt: NOW + 300_000,
    sealedPreview: new Uint8Array([3, 1, 4]),
    ...overrides,
  };
}
