/** Presence token ids used once: part of the store contract suite (migration 5). */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CONSUMED_TOKEN_GRACE_MS } from "../../store/store.js";
import { NOW } from "../sample-records.js";
import type { StoreContractKit } from "./kit.js";

/** Registers the presence-token tests of the store contract. */
export function describePresenceTokens(kit: StoreContractKit): void {
  const { open, openPeer, tenant } = kit;
  describe("presence tokens", () => {
    const use = (tenantId: string, tokenId: string, usedAt = NOW) => ({ tenantId, tokenId, userId: "user-1", usedAt, expiresAt: usedAt + 120_000 });

    it("records a presence token's id once per tenant, on every instance", async () => {
      const fixture = await open();
      const { store } = fixture;
      const t = tenant();
      const id = randomUUID();
      expect(await store.usePresenceToken(use(t, id))).toBe(true);
      expect(await store.usePresenceToken(use(t, id))).toBe(false);
      expect(await store.usePresenceToken(use(tenant(), id))).toBe(true);
      const peer = await openPeer(fixture);
      if (peer !== undefined) {
        expect(await peer.usePresenceToken(use(t, id))).toBe(false);
        const raced = randomUUID();
        const answers = await Promise.all([store.usePresenceToken(use(t, raced)), peer.usePresenceToken(use(t, raced))]);
        expect(answers.filter(Boolean)).toHaveLength(1);
      }
    });

    it("forgets ids only once their token is long expired", async () => {
      const { store } = await open();
      const t = tenant();
      const id = randomUUID();
      expect(await store.usePresenceToken(use(t, id))).toBe(true);
      // Still within the grace after expiry: the id is remembered.
      expect(await store.usePresenceToken(use(t, id, NOW + 120_000 + CONSUMED_TOKEN_GRACE_MS - 1))).toBe(false);
      // Long after: forgotten in passing (its token could not verify any more anyway).
      const later = NOW + 120_000 + CONSUMED_TOKEN_GRACE_MS + 1;
      expect(await store.usePresenceToken(use(t, randomUUID(), later))).toBe(true);
      expect(await store.usePresenceToken({ ...use(t, id, later), expiresAt: later + 120_000 })).toBe(true);
    });
  });
}
