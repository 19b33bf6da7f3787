/**
 * The shared contract suite every `Store` passes (SQLite and PostgreSQL). Import it from
 * `@toolpact/runtime/testing` and call it from a vitest file with a factory of fresh stores.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Store } from "../store/store.js";
import { describeAdminReads } from "./store-contract/admin-reads.js";
import { describeChanges } from "./store-contract/changes.js";
import { describeConfiguration } from "./store-contract/configuration.js";
import { describeConfirmations } from "./store-contract/confirmations.js";
import { createStoreContractKit, type StoreContractFixture } from "./store-contract/kit.js";
import { describeOperations } from "./store-contract/operations.js";
import { describePresenceTokens } from "./store-contract/presence-tokens.js";
import { describeRecords } from "./store-contract/records.js";
import { describeSettledRecords } from "./store-contract/settled-records.js";
import { describeTasks } from "./store-contract/tasks.js";

export type { StoreContractFixture } from "./store-contract/kit.js";

/**
 * Registers the contract tests for one store implementation.
 * @example describeStoreContract("sqlite", async () => ({ store: await createSqliteStore({ path }), dispose }))
 */
export function describeStoreContract(name: string, makeStore: () => Promise<Store | StoreContractFixture>): void {
  describe(`Store contract: ${name}`, () => {
    const kit = createStoreContractKit(makeStore);

    it("answers ping while open and refuses work after close", async () => {
      const { store } = await kit.open();
      expect(await store.ping()).toBe(true);
      await store.close();
      expect(await store.ping()).toBe(false);
      await expect(store.getOperation(kit.tenant(), randomUUID())).rejects.toMatchObject({ code: "SHUTTING_DOWN" });
      await expect(store.appendActivity(kit.activity(kit.tenant()))).rejects.toMatchObject({ code: "SHUTTING_DOWN" });
    });

    describeConfiguration(kit);
    describeOperations(kit);
    describeRecords(kit);
    describeConfirmations(kit);
    describePresenceTokens(kit);
    describeSettledRecords(kit);
    describeChanges(kit);
    describeAdminReads(kit);
    describeTasks(kit);
  });
}
