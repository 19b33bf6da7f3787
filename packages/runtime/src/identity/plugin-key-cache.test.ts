/**
 * Authentication from kept plugin keys, and the ways a revocation must still get through: on another
 * instance at once (PostgreSQL, two runtimes on one schema; SQLite, two connections to one file), and
 * while an instance cannot hear the others (its LISTEN connection lost).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Principal, ToolChanges } from "../api.js";
import type { ToolpactRuntime } from "../runtime.js";
import { ASSISTANT, NOTES, TENANT, createFixture, rejection, type RuntimeFixture } from "../testing/fixtures.js";
import { postgresTestGate } from "../testing/index.js";
import { createRecordingStore } from "../testing/recording-store.js";
import { useTwoPostgresInstances } from "../testing/instances.js";

const search = { providerId: NOTES, tool: "search-records" };
const create = { providerId: NOTES, tool: "create-record", version: 1 };
/** Keep background work and the config refresh window out of the way: what is seen is what was heard. */
const QUIET = { recoveryIntervalMs: 0, configRefreshMs: 3_600_000, confirmationPollMs: 200 } as const;

let fixtures: RuntimeFixture[] = [];
afterEach(async () => {
  await Promise.all(fixtures.map((fx) => fx.dispose()));
  fixtures = [];
});

/** A fresh key of the assistant and the credentials that present it. */
async function credentialsOn(fx: RuntimeFixture): Promise<{ keyId: string; pluginKey: string; actorToken: string }> {
  const { keyId, key } = await fx.runtime.admin.issuePluginKey(TENANT, ASSISTANT);
  return { keyId, pluginKey: key, actorToken: await fx.actorToken() };
}

/** Resolves once `changes` reports a change of the fixture tenant. */
function heard(changes: ToolChanges): Promise<void> {
  return new Promise((resolve) => {
    const stop = changes.subscribe((tenantId) => {
      if (tenantId === TENANT || tenantId === undefined) {
        stop();
        resolve();
      }
    });
  });
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Every way instance `b` can be called with a revoked key: each must be refused. */
async function expectRefusedEverywhere(b: ToolpactRuntime, before: Principal, credentials: { pluginKey: string; actorToken: string }): Promise<void> {
  expect((await rejection(b.authenticate(credentials))).code).toBe("UNAUTHENTICATED");
  expect((await rejection(b.execute(before, search, { query: "after" }))).code).toBe("UNAUTHENTICATED");
  expect((await rejection(b.preview(before, create, { title: "after" }))).code).toBe("UNAUTHENTICATED");
}

describe("plugin keys kept in memory", () => {
  it("authenticate without reading the store once a key is kept, and read it again after its tenant changed", async () => {
    const recording = createRecordingStore();
    const fx = await createFixture({ runtime: QUIET, wrapStore: (store) => recording.wrap(store) });
    fixtures.push(fx);
    const credentials = await credentialsOn(fx);
    const principal = await fx.runtime.authenticate(credentials);
    await fx.runtime.execute(principal, search, { query: "warm" });
    recording.clear();
    const again = await fx.runtime.authenticate(credentials);
    await fx.runtime.execute(again, search, { query: "x" });
    expect(recording.lines().filter((line) => line.startsWith("findPluginKey"))).toEqual([]);
    await fx.runtime.admin.setPolicy(TENANT, { rules: [{ tools: "*", decision: "allow" }] });
    recording.clear();
    await fx.runtime.execute(await fx.runtime.authenticate(credentials), search, { query: "y" });
    expect(recording.lines().filter((line) => line.startsWith("findPluginKey"))).toHaveLength(1);
  });

  it("never answer for a key that matches a kept key's id but not its secret", async () => {
    const fx = await createFixture({ runtime: QUIET });
    fixtures.push(fx);
    const credentials = await credentialsOn(fx);
    await fx.runtime.authenticate(credentials);
    const forged = `${credentials.pluginKey.slice(0, -4)}AAAA`;
    expect((await rejection(fx.runtime.authenticate({ ...credentials, pluginKey: forged }))).code).toBe("UNAUTHENTICATED");
  });

  it("SQLite: a key revoked through another connection to the file is refused by the very next call here", async () => {
    const a = await createFixture({ runtime: QUIET });
    fixtures.push(a);
    const b = await a.reopen(QUIET);
    for (let round = 0; round < 5; round++) {
      const credentials = await credentialsOn(a);
      const onB = await b.authenticate(credentials);
      await b.execute(onB, search, { query: "warm" });
      await a.runtime.admin.revokePluginKey(TENANT, credentials.keyId);
      await expectRefusedEverywhere(b, onB, credentials);
    }
  });
});

const gate = await postgresTestGate("PostgreSQL key cache tests");

describe.skipIf(gate.skip !== undefined)("plugin keys kept in memory, on PostgreSQL", () => {
  const twoInstances = useTwoPostgresInstances(gate, { runtime: QUIET });

  it("revoke on A: the very next execute on B is refused, and no write runs", async () => {
    const { a, b } = await twoInstances();
    for (let round = 0; round < 10; round++) {
      const credentials = await credentialsOn(a);
      const onB = await b.authenticate(credentials);
      await b.execute(onB, search, { query: "warm" });
      const token = ((await b.preview(onB, create, { title: `r${round}` })).confirmation as { token: string }).token;
      const executed = a.handlers.executed.length;
      await a.runtime.admin.revokePluginKey(TENANT, credentials.keyId);
      // no waiting for B to hear of it: the commit checks the tenant's config version, which the revocation moved
      expect((await rejection(b.execute(onB, create, { title: `r${round}` }, { confirmationToken: token }))).code).toBe("UNAUTHENTICATED");
      expect((await rejection(b.execute(onB, search, { query: "after" }))).code).toBe("UNAUTHENTICATED");
      expect(a.handlers.executed.slice(executed).filter((call) => call.tool === "create-record")).toEqual([]);
    }
  });

  it("revoke on A: B hears it and refuses every call with the key, previews and authentication too", async () => {
    const { a, b } = await twoInstances();
    const credentials = await credentialsOn(a);
    const onB = await b.authenticate(credentials);
    await b.preview(onB, create, { title: "warm" });
    const told = heard(b.toolChanges);
    await a.runtime.admin.revokePluginKey(TENANT, credentials.keyId);
    await told;
    await expectRefusedEverywhere(b, onB, credentials);
  });

  it("a lost LISTEN connection does not let a revoked key through: B reads keys from the store until it hears again", async () => {
    const { a, b, proxy } = await twoInstances();
    expect(b.toolChanges.hearsOthers()).toBe(true);
    const credentials = await credentialsOn(a);
    const onB = await b.authenticate(credentials);
    await b.preview(onB, create, { title: "warm" });
    // B's LISTEN connection is cut and kept from coming back; its pool still works
    proxy.block("instance-b/listen");
    await until(() => !b.toolChanges.hearsOthers(), "B noticed its LISTEN connection is gone");
    await a.runtime.admin.revokePluginKey(TENANT, credentials.keyId);
    await expectRefusedEverywhere(b, onB, credentials);
    // a new key still works, read from the store each time
    const fresh = await credentialsOn(a);
    await expect(b.preview(await b.authenticate(fresh), create, { title: "fresh" })).resolves.toBeDefined();
    // back: what was kept before is not trusted; the revoked key stays refused
    proxy.unblock();
    await until(() => b.toolChanges.hearsOthers(), "B listens again");
    await expectRefusedEverywhere(b, onB, credentials);
  });

  it("confirmations.wait on B answers as soon as A's decision is heard, and polls while B cannot hear", async () => {
    const { a, b, proxy } = await twoInstances();
    const untrusted = await a.principal("com.example.untrusted");
    const person = { tenantId: TENANT, userId: "alice" };
    const ask = async (title: string) => ((await a.runtime.preview(untrusted, create, { title })).confirmation as { requestId: string }).requestId;

    const heardRequest = await ask("heard");
    const started = performance.now();
    const waiting = b.waitConfirmation(untrusted, heardRequest, { timeoutMs: 20_000 });
    setTimeout(() => void a.runtime.decideConfirmation(person, heardRequest, "approve"), 100);
    expect((await waiting).status).toBe("approved");
    // the safety poll of a waiter that hears decisions is 10 s: this was the notification
    expect(performance.now() - started).toBeLessThan(8_000);

    proxy.block("instance-b/listen");
    await until(() => !b.toolChanges.hearsOthers(), "B noticed its LISTEN connection is gone");
    const polledRequest = await ask("polled");
    const polling = b.waitConfirmation(untrusted, polledRequest, { timeoutMs: 20_000 });
    setTimeout(() => void a.runtime.decideConfirmation(person, polledRequest, "deny"), 100);
    expect((await polling).status).toBe("denied");
  });
});
