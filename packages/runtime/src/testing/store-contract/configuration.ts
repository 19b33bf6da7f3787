/** Tenant configuration, plugin keys, activations, the recovery policy and runs: part of the store contract suite. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { NOW } from "../sample-records.js";
import type { StoreContractKit } from "./kit.js";

/** Registers the configuration tests of the store contract. */
export function describeConfiguration(kit: StoreContractKit): void {
  const { open, activity, tenant } = kit;
  describe("tenant configuration", () => {
    it("starts empty at version 0 and bumps the version on every change", async () => {
      const { store } = await open();
      const t = tenant();
      expect(await store.loadTenantConfig(t)).toEqual({ tenantId: t, version: 0, plugins: [], activations: [] });
      expect(await store.loadTenantConfig(t, 0)).toBeUndefined();

      await store.installPlugin(t, "com.example.notes", NOW);
      const installed = await store.loadTenantConfig(t, 0);
      expect(installed?.version).toBe(1);
      expect(installed?.plugins).toEqual([{ pluginId: "com.example.notes", enabled: true, installedAt: NOW }]);

      await store.installPlugin(t, "com.example.notes", NOW + 1);
      expect(await store.loadTenantConfig(t, 1)).toBeUndefined();

      expect(await store.setPluginEnabled(t, "com.example.notes", { enabled: false, now: NOW + 2 })).toBe(true);
      const disabled = await store.loadTenantConfig(t, 1);
      expect(disabled?.version).toBe(2);
      expect(disabled?.plugins[0]?.enabled).toBe(false);

      expect(await store.setPluginEnabled(t, "com.example.other", { enabled: true, now: NOW })).toBe(false);
    });

    it("lists the ids of configured tenants, in order, up to a limit", async () => {
      const { store } = await open();
      const [a, b, never] = [tenant(), tenant(), tenant()];
      await store.installPlugin(b, "com.example.notes", NOW);
      await store.setPolicy(a, JSON.stringify({ rules: [] }), activity(a));
      const ids = await store.listTenantIds(1_000_000);
      expect(ids).toEqual(expect.arrayContaining([a, b]));
      expect(ids).not.toContain(never);
      expect([...ids].sort()).toEqual(ids);
      expect(await store.listTenantIds(1)).toHaveLength(1);
    });

    it("keeps the policy and records its change event in the same write", async () => {
      const { store } = await open();
      const t = tenant();
      const event = activity(t, { kind: "policy", phase: "change", outcome: "succeeded" });
      await store.setPolicy(t, '{"rules":[]}', event);
      const config = await store.loadTenantConfig(t);
      expect(config?.policy).toBe('{"rules":[]}');
      expect(config?.version).toBe(1);
      expect((await store.listActivity(t, { limit: 10 })).map((e) => e.id)).toEqual([event.id]);
    });

    it("never shows one tenant's configuration to another", async () => {
      const { store } = await open();
      const a = tenant();
      const b = tenant();
      await store.installPlugin(a, "com.example.notes", NOW);
      await store.setPolicy(a, '{"rules":[]}', activity(a, { kind: "policy", phase: "change" }));
      expect(await store.loadTenantConfig(b)).toEqual({ tenantId: b, version: 0, plugins: [], activations: [] });
      expect(await store.setPluginEnabled(b, "com.example.notes", { enabled: false, now: NOW })).toBe(false);
    });
  });

  describe("plugin keys", () => {
    it("finds a key by id, revokes it once, and only in its own tenant", async () => {
      const { store } = await open();
      const t = tenant();
      const keyHash = new Uint8Array(32).fill(7);
      await store.insertPluginKey({ keyId: "k1", tenantId: t, pluginId: "com.example.caller", keyHash, createdAt: NOW });
      const found = await store.findPluginKey("k1");
      expect(found).toMatchObject({ keyId: "k1", tenantId: t, pluginId: "com.example.caller", createdAt: NOW });
      expect(Buffer.from(found!.keyHash).equals(Buffer.from(keyHash))).toBe(true);
      expect(found?.revokedAt).toBeUndefined();

      expect(await store.revokePluginKey(tenant(), "k1", NOW)).toBe(false);
      expect(await store.revokePluginKey(t, "k1", NOW + 5)).toBe(true);
      expect(await store.revokePluginKey(t, "k1", NOW + 6)).toBe(false);
      expect((await store.findPluginKey("k1"))?.revokedAt).toBe(NOW + 5);
      expect(await store.findPluginKey("missing")).toBeUndefined();
    });

    it("reads a key with its tenant's config version, which revoking moves (and only revoking, of key writes)", async () => {
      const { store } = await open();
      const t = tenant();
      await store.installPlugin(t, "com.example.caller", NOW);
      await store.insertPluginKey({ keyId: "kv", tenantId: t, pluginId: "com.example.caller", keyHash: new Uint8Array(32), createdAt: NOW });
      await store.insertPluginKey({ keyId: "kw", tenantId: t, pluginId: "com.example.caller", keyHash: new Uint8Array(32), createdAt: NOW });
      expect(await store.findPluginKey("kv")).toMatchObject({ tenantConfigVersion: 1 });
      expect(await store.revokePluginKey(t, "kv", NOW + 1)).toBe(true);
      expect(await store.findPluginKey("kv")).toMatchObject({ revokedAt: NOW + 1, tenantConfigVersion: 2 });
      expect(await store.findPluginKey("kw")).toMatchObject({ tenantConfigVersion: 2 });
      expect(await store.revokePluginKey(t, "kv", NOW + 2)).toBe(false);
      expect((await store.loadTenantConfig(t))?.version).toBe(2);
      const alone = tenant();
      await store.insertPluginKey({ keyId: "kx", tenantId: alone, pluginId: "p", keyHash: new Uint8Array(32), createdAt: NOW });
      expect(await store.findPluginKey("kx")).toMatchObject({ tenantConfigVersion: 0 });
    });

    it("refuses a second key with the same id", async () => {
      const { store } = await open();
      const record = { keyId: "dup", tenantId: tenant(), pluginId: "p", keyHash: new Uint8Array(32), createdAt: NOW };
      await store.insertPluginKey(record);
      await expect(store.insertPluginKey(record)).rejects.toBeTruthy();
    });
  });

  describe("activations and the recovery policy", () => {
    it("keeps one activation per plugin, replaces it, bumps the version and records the change", async () => {
      const { store } = await open();
      const t = tenant();
      const first = activity(t, { kind: "policy", phase: "change" });
      await store.setActivation({ tenantId: t, pluginId: "com.example.gates", gates: ["a", "b"], hooks: [], guards: ["g"] }, first);
      let config = await store.loadTenantConfig(t);
      expect(config?.version).toBe(1);
      expect(config?.activations).toEqual([{ pluginId: "com.example.gates", gates: ["a", "b"], hooks: [], guards: ["g"] }]);
      await store.setActivation(
        { tenantId: t, pluginId: "com.example.gates", gates: [], hooks: ["h"], guards: [] },
        activity(t, { kind: "policy", phase: "change" }),
      );
      await store.setActivation(
        { tenantId: t, pluginId: "com.example.another", gates: ["x"], hooks: [], guards: [] },
        activity(t, { kind: "policy", phase: "change" }),
      );
      config = await store.loadTenantConfig(t, 1);
      expect(config?.version).toBe(3);
      expect(config?.activations).toEqual([
        { pluginId: "com.example.another", gates: ["x"], hooks: [], guards: [] },
        { pluginId: "com.example.gates", gates: [], hooks: ["h"], guards: [] },
      ]);
      expect((await store.listActivity(t, { limit: 10 })).map((e) => e.kind)).toEqual(["policy", "policy", "policy"]);
      expect((await store.loadTenantConfig(tenant()))?.activations).toEqual([]);
    });

    it("keeps the recovery policy beside the policy, bumping the version", async () => {
      const { store } = await open();
      const t = tenant();
      await store.setPolicy(t, '{"rules":[]}', activity(t, { kind: "policy", phase: "change" }));
      await store.setRecoveryPolicy(t, '{"rules":[{"tools":"*","retry":"none"}]}', activity(t, { kind: "policy", phase: "change" }));
      const config = await store.loadTenantConfig(t);
      expect(config).toMatchObject({ version: 2, policy: '{"rules":[]}', recoveryPolicy: '{"rules":[{"tools":"*","retry":"none"}]}' });
      expect((await store.loadTenantConfig(tenant()))?.recoveryPolicy).toBeUndefined();
    });
  });

  describe("runs", () => {
    it("keeps a run bound to its tenant, closes it once", async () => {
      const { store } = await open();
      const t = tenant();
      const run = {
        tenantId: t,
        runId: randomUUID(),
        callerPluginId: "com.example.caller",
        actorUserId: "user-1",
        allow: ["com.example.notes:*", "com.example.mailer:send@1"],
        createdAt: NOW,
        expiresAt: NOW + 60_000,
      };
      await store.insertRun(run);
      expect(await store.getRun(t, run.runId)).toEqual(run);
      expect(await store.getRun(tenant(), run.runId)).toBeUndefined();
      expect(await store.closeRun(tenant(), run.runId, NOW + 5)).toBe(false);
      expect(await store.closeRun(t, run.runId, NOW + 5)).toBe(true);
      expect(await store.closeRun(t, run.runId, NOW + 6)).toBe(false);
      expect((await store.getRun(t, run.runId))?.closedAt).toBe(NOW + 5);
    });
  });
}
