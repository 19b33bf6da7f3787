/** The reads only the operator console makes (key ages, pending requests): part of the store contract suite. */
import { describe, expect, it } from "vitest";
import { NOW, sampleConfirmation as request } from "../sample-records.js";
import type { StoreContractKit } from "./kit.js";

/** Registers the admin-read tests of the store contract. */
export function describeAdminReads(kit: StoreContractKit): void {
  const { open, tenant } = kit;
  describe("admin reads", () => {
    it("lists a tenant's plugin keys, live and revoked, oldest first, never another tenant's", async () => {
      const { store } = await open();
      const t = tenant();
      const other = tenant();
      const keyHash = new Uint8Array(32);
      await store.insertPluginKey({ keyId: `${t}-b`, tenantId: t, pluginId: "com.example.caller", keyHash, createdAt: NOW + 10 });
      await store.insertPluginKey({ keyId: `${t}-a`, tenantId: t, pluginId: "com.example.notes", keyHash, createdAt: NOW });
      await store.insertPluginKey({ keyId: `${other}-c`, tenantId: other, pluginId: "com.example.caller", keyHash, createdAt: NOW });
      expect(await store.revokePluginKey(t, `${t}-b`, NOW + 20)).toBe(true);
      const keys = await store.listPluginKeys(t, 10);
      expect(keys.map((key) => [key.keyId, key.pluginId, key.createdAt, key.revokedAt])).toEqual([
        [`${t}-a`, "com.example.notes", NOW, undefined],
        [`${t}-b`, "com.example.caller", NOW + 10, NOW + 20],
      ]);
      expect(await store.listPluginKeys(t, 1)).toHaveLength(1);
    });

    it("lists a tenant's live pending requests, soonest to expire first, without decided or expired ones", async () => {
      const { store } = await open();
      const t = tenant();
      const late = request(t, { expiresAt: NOW + 9000 });
      const soon = request(t, { expiresAt: NOW + 2000 });
      const expired = request(t, { expiresAt: NOW + 500 });
      const decided = request(t, { expiresAt: NOW + 5000 });
      for (const made of [late, soon, expired, decided]) expect(await store.createConfirmation(made, 10)).toEqual({ status: "created" });
      expect(await store.createConfirmation(request(tenant()), 10)).toEqual({ status: "created" });
      const denied = await store.transitionConfirmation({ tenantId: t, requestId: decided.requestId, to: "denied", at: NOW + 600, when: "live" });
      expect(denied?.status).toBe("denied");
      const pending = await store.listPendingConfirmations(t, NOW + 1000, 10);
      expect(pending.map((row) => row.requestId)).toEqual([soon.requestId, late.requestId]);
      expect(pending[0]).toMatchObject({ tool: soon.tool, callerPluginId: soon.callerPluginId, actorUserId: soon.actorUserId, status: "pending" });
    });
  });
}
