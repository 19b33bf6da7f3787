/**
 * Text from trusted sources that no store can keep (NUL above all: PostgreSQL's text refuses it) is refused
 * where it enters, with UNAUTHENTICATED or INPUT_INVALID naming the field, never a store error (503):
 * an actor or presence token's `sub`, `admin.revokePluginKey`'s `keyId`. Run on SQLite and PostgreSQL.
 */
import { SignJWT } from "jose";
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../store/store.js";
import { createPostgresStore } from "../store/postgres/postgres-store.js";
import { ASSISTANT, ISSUER, NOTES, TENANT, createFixture, rejection, type RuntimeFixture } from "../testing/fixtures.js";
import { postgresTestGate } from "../testing/index.js";
import { usePostgresHarness } from "../testing/postgres-harness.js";

const gate = await postgresTestGate("Untrusted-text tests on PostgreSQL");
const BAD = ["al\u0000ice", "al\u0007ice", "al\uDC00ice"];

let fixtures: RuntimeFixture[] = [];
afterEach(async () => {
  await Promise.all(fixtures.map((fx) => fx.dispose()));
  fixtures = [];
});

function presenceToken(fx: RuntimeFixture, sub: string): Promise<string> {
  const iat = Math.floor(fx.now() / 1000);
  return new SignJWT({ sub, tid: TENANT, jti: randomUUID() })
    .setProtectedHeader({ alg: "HS256" })
    .setIssuer(ISSUER)
    .setAudience("toolpact-presence")
    .setIssuedAt(iat)
    .setExpirationTime(iat + 120)
    .sign(fx.actorSecret);
}

function suite(openStore: (() => Promise<Store>) | undefined): void {
  async function fixture(): Promise<RuntimeFixture> {
    const fx = await createFixture({ runtime: { recoveryIntervalMs: 0 }, ...(openStore === undefined ? {} : { openStore }) });
    fixtures.push(fx);
    return fx;
  }

  it("refuses an actor token whose sub the store could not keep, before any call reaches the store", async () => {
    const fx = await fixture();
    const { key } = await fx.runtime.admin.issuePluginKey(TENANT, ASSISTANT);
    for (const sub of BAD) {
      const error = await rejection(fx.runtime.authenticate({ pluginKey: key, actorToken: await fx.actorToken({ sub }) }));
      expect(error.code).toBe("UNAUTHENTICATED");
      expect(error.message).toMatch(/`sub` claim \(user id\).*without control characters \(NUL included\)/);
    }
    // the same user without the stray character works end to end
    const alice = await fx.runtime.authenticate({ pluginKey: key, actorToken: await fx.actorToken({ sub: "alice" }) });
    await expect(fx.runtime.execute(alice, { providerId: NOTES, tool: "search-records" }, { query: "x" })).resolves.toBeDefined();
  });

  it("refuses a presence token whose sub the store could not keep", async () => {
    const fx = await fixture();
    for (const sub of BAD) {
      const error = await rejection(fx.runtime.verifyPresenceToken(await presenceToken(fx, sub)));
      expect(error.code).toBe("UNAUTHENTICATED");
      expect(error.message).toMatch(/presence token's `sub` claim/);
    }
  });

  it("answers INPUT_INVALID naming keyId for a key id with NUL or control characters", async () => {
    const fx = await fixture();
    for (const keyId of ["k\u0000", "key\u00071", " key", "x".repeat(129)]) {
      const error = await rejection(fx.runtime.admin.revokePluginKey(TENANT, keyId));
      expect(error.code).toBe("INPUT_INVALID");
      expect(error.message).toMatch(/^keyId is malformed/);
    }
  });
}

describe("untrusted text on SQLite", () => suite(undefined));

describe.skipIf(gate.skip !== undefined)("untrusted text on PostgreSQL", () => {
  const { url, freshSchema } = usePostgresHarness(gate);
  suite(() => createPostgresStore({ url, schema: freshSchema() }));
});
