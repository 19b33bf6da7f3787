/** What a store announces once committed, and what its epoch says: part of the store contract suite. */
import { describe, expect, it } from "vitest";
import type { StoreChange } from "../../store/store.js";
import { NOW, sampleActivity, sampleConfirmation } from "../sample-records.js";
import type { StoreContractKit } from "./kit.js";

/** Registers the change-feed tests of the store contract. */
export function describeChanges(kit: StoreContractKit): void {
  const { open, openPeer, tenant } = kit;

  describe("changes", () => {
    it("announces each change of a tenant's config, and each decided request, once committed", async () => {
      const { store } = await open();
      const heard: StoreChange[] = [];
      const stop = store.changes.subscribe((change) => heard.push(change));
      const t = tenant();
      const ours = () => heard.filter((change) => change.kind !== "resync" && change.tenantId === t);
      await store.installPlugin(t, "com.example.notes", NOW);
      await store.installPlugin(t, "com.example.notes", NOW);
      await store.setPluginEnabled(t, "com.example.notes", { enabled: false, now: NOW });
      await store.setPluginEnabled(t, "com.example.missing", { enabled: false, now: NOW });
      await store.setPolicy(t, "{}", sampleActivity(t, { kind: "policy", phase: "change" }));
      await store.setActivation({ tenantId: t, pluginId: "p", gates: [], hooks: [], guards: [] }, sampleActivity(t, { kind: "policy", phase: "change" }));
      await store.setRecoveryPolicy(t, "{}", sampleActivity(t, { kind: "policy", phase: "change" }));
      await store.insertPluginKey({ keyId: `key-${t}`, tenantId: t, pluginId: "p", keyHash: new Uint8Array(32), createdAt: NOW });
      await store.revokePluginKey(t, `key-${t}`, NOW);
      await store.revokePluginKey(t, `key-${t}`, NOW);
      const request = sampleConfirmation(t);
      await store.createConfirmation(request, 10);
      await store.transitionConfirmation({ tenantId: t, requestId: request.requestId, to: "denied", at: NOW, when: "live" });
      await store.transitionConfirmation({ tenantId: t, requestId: request.requestId, to: "approved", at: NOW, when: "live" });
      // PostgreSQL also hears its own changes back through NOTIFY: count each change once
      await new Promise((resolve) => setTimeout(resolve, 100));
      const distinct = (kind: StoreChange["kind"]) => ours().filter((change) => change.kind === kind);
      expect(distinct("tenant").length).toBeGreaterThanOrEqual(6);
      expect(new Set(distinct("confirmation").map((change) => JSON.stringify(change)))).toEqual(
        new Set([JSON.stringify({ kind: "confirmation", tenantId: t, requestId: request.requestId })]),
      );
      stop();
      const before = heard.length;
      await store.installPlugin(t, "com.example.other", NOW);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(heard).toHaveLength(before);
    });

    it("keeps its epoch while nothing happens, and moves it when another connection commits (or hears that it did)", async () => {
      const fixture = await open();
      const { store } = fixture;
      const epoch = store.changes.epoch();
      expect(epoch).toEqual(expect.any(Number));
      const t = tenant();
      await store.appendActivity(sampleActivity(t));
      await store.installPlugin(t, "com.example.notes", NOW);
      const peer = await openPeer(fixture);
      if (peer === undefined) return;
      const heard: StoreChange[] = [];
      store.changes.subscribe((change) => heard.push(change));
      await peer.installPlugin(t, "com.example.other", NOW);
      const deadline = Date.now() + 2_000;
      // A store that hears other instances announces the peer's change; one that cannot moves its epoch.
      while (Date.now() < deadline && store.changes.epoch() === epoch && !heard.some((change) => change.kind === "tenant" && change.tenantId === t)) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const announced = heard.some((change) => change.kind === "tenant" && change.tenantId === t);
      expect(store.changes.hearsOthers() ? announced : store.changes.epoch() !== epoch).toBe(true);
    });
  });
}
