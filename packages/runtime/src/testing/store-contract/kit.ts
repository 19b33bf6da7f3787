import { randomUUID } from "node:crypto";
import { afterEach } from "vitest";
import type { ActivityRecord, IdempotencyScope, OperationRecord, OperationSettle, Store } from "../../store/store.js";
import { sampleActivity, sampleSettle } from "../sample-records.js";

/** A store under test, with an optional second connection to the same database (another instance). */
export interface StoreContractFixture {
  readonly store: Store;
  /** Opens another store on the same database: single-use and idempotency must hold across both. */
  openPeer?(): Promise<Store>;
  /** Releases whatever the factory made (files, schemas). */
  dispose?(): Promise<void>;
}

/** What every part of the contract suite uses: fresh stores (closed after each test) and sample records. */
export interface StoreContractKit {
  /** A fresh store from the factory. */
  open(): Promise<StoreContractFixture>;
  /** Another store on the same database, when the factory can make one. */
  openPeer(fixture: StoreContractFixture): Promise<Store | undefined>;
  /** An idempotency scope of `tenantId` for `key`. */
  scope(tenantId: string, key?: string, overrides?: Partial<IdempotencyScope>): IdempotencyScope;
  /** A sample call event with its caller, provider, tool, version and effect set. */
  activity(tenantId: string, overrides?: Partial<ActivityRecord>): ActivityRecord;
  /** A settle of `op` to succeeded with a sample event. */
  settleOf(op: OperationRecord, overrides?: Partial<OperationSettle>): OperationSettle;
  /** A fresh tenant id. */
  tenant(): string;
}

/** The kit of one `describeStoreContract` block (call it inside the block: it registers the cleanup). */
export function createStoreContractKit(makeStore: () => Promise<Store | StoreContractFixture>): StoreContractKit {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!().catch(() => undefined);
  });
  const activity = (tenantId: string, overrides: Partial<ActivityRecord> = {}): ActivityRecord =>
    sampleActivity(tenantId, {
      callerPluginId: "com.example.caller",
      providerPluginId: "com.example.notes",
      tool: "com.example.notes:create-record@1",
      version: 1,
      effect: "write",
      ...overrides,
    });
  return {
    async open() {
      const made = await makeStore();
      const fixture: StoreContractFixture =
        "store" in made && typeof (made as StoreContractFixture).store === "object" ? (made as StoreContractFixture) : { store: made as Store };
      cleanups.push(async () => {
        await fixture.store.close().catch(() => undefined);
        await fixture.dispose?.();
      });
      return fixture;
    },
    async openPeer(fixture) {
      if (fixture.openPeer === undefined) return undefined;
      const peer = await fixture.openPeer();
      cleanups.unshift(() => peer.close());
      return peer;
    },
    scope: (tenantId, key = "key-1", overrides = {}) => ({
      tenantId,
      callerPluginId: "com.example.caller",
      actorUserId: "user-1",
      tool: "com.example.notes:create-record@1",
      keyHash: key,
      ...overrides,
    }),
    activity,
    settleOf: (op, overrides = {}) => sampleSettle(op, activity(op.tenantId, { operationId: op.operationId }), overrides),
    tenant: () => `tenant-${randomUUID()}`,
  };
}
