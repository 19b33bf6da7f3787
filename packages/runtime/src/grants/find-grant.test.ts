/**
 * Grants kept in memory (GrantFinder), and the ways a change must still get through: a grant made or
 * revoked here, through another connection to the SQLite file, on another PostgreSQL instance, and while
 * an instance cannot hear the others (its LISTEN connection lost). A grant with a call limit is read
 * every time. Whatever is kept, no call runs under a revoked grant: the begin checks it again.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Principal, TenantPolicy } from "../api.js";
import type { ToolpactRuntime } from "../runtime.js";
import type { GrantRecord, Store } from "../store/store.js";
import { ASSISTANT, NOTES, TENANT, createFixture, type RuntimeFixture } from "../testing/fixtures.js";
import { postgresTestGate } from "../testing/index.js";
import { createRecordingStore } from "../testing/recording-store.js";
import { sampleGrant, useTwoPostgresInstances } from "../testing/instances.js";

const create = { providerId: NOTES, tool: "create-record", version: 1 };
const GRANTING: TenantPolicy = {
  rules: [
    { tools: "com.example.notes:create-record", decision: "confirm", callers: [ASSISTANT], grants: { maxSeconds: 86_400, maxCalls: 1000 } },
    { tools: "*", decision: "allow" },
  ],
};
const QUIET = { recoveryIntervalMs: 0, configRefreshMs: 3_600_000, confirmationPollMs: 200 } as const;
/** What a call the user must confirm says, when no grant was found (not one that ended at the begin). */
const ASKS = /requires confirmation: call preview first/;

let fixtures: RuntimeFixture[] = [];
afterEach(async () => {
  await Promise.all(fixtures.map((fx) => fx.dispose()));
  fixtures = [];
});

/** Writes a grant of the assistant's create-record for `principal`'s user straight to `store`. */
async function grant(fx: RuntimeFixture, store: Store, principal: Principal, overrides: Partial<GrantRecord> = {}): Promise<GrantRecord> {
  const record = sampleGrant(fx, principal, overrides);
  await store.insertGrant(record);
  return record;
}

/** "ran", or the refusal's code and message. */
async function outcome(runtime: ToolpactRuntime, principal: Principal, title: string): Promise<string> {
  try {
    await runtime.execute(principal, create, { title });
    return "ran";
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    return `${code}: ${message}`;
  }
}

const revoke = (runtime: ToolpactRuntime, granted: GrantRecord) => runtime.grants.revoke({ tenantId: TENANT, userId: granted.actorUserId }, granted.grantId);

/** A fixture whose store calls are recorded; `reads` counts the grant lists read since `recording.clear()`. */
async function recorded() {
  const recording = createRecordingStore();
  const fx = await createFixture({ policy: GRANTING, runtime: QUIET, wrapStore: (store) => recording.wrap(store) });
  fixtures.push(fx);
  const reads = () => recording.lines().filter((line) => line.startsWith("listGrants")).length;
  return { fx, principal: await fx.principal(ASSISTANT), recording, reads };
}

describe("grants kept in memory", () => {
  it("a call under a grant reads no grants once they are kept; a grant revoked or made here is seen by the very next call", async () => {
    const { fx, principal, recording, reads } = await recorded();

    // A user with no grants: asked every time, read once.
    recording.clear();
    expect(await outcome(fx.runtime, principal, "a")).toMatch(ASKS);
    expect(await outcome(fx.runtime, principal, "b")).toMatch(ASKS);
    expect(reads()).toBe(1);

    const granted = await grant(fx, fx.store, principal);
    recording.clear();
    for (const title of ["c", "d", "e"]) expect(await outcome(fx.runtime, principal, title)).toBe("ran");
    expect(reads()).toBe(1);

    expect(await revoke(fx.runtime, granted)).toBe(true);
    expect(await outcome(fx.runtime, principal, "f")).toMatch(ASKS);
    expect(fx.handlers.executed.map((call) => (call.input as { title: string }).title)).toEqual(["c", "d", "e"]);
  });

  it("a grant with a call limit is read on every call: its last call runs, the next asks", async () => {
    const { fx, principal, recording, reads } = await recorded();
    await grant(fx, fx.store, principal, { maxCalls: 2 });
    recording.clear();
    expect([await outcome(fx.runtime, principal, "a"), await outcome(fx.runtime, principal, "b")]).toEqual(["ran", "ran"]);
    expect(await outcome(fx.runtime, principal, "c")).toMatch(ASKS);
    expect(reads()).toBeGreaterThanOrEqual(3);
  });

  it("mayCover (the MCP bridge's question) answers from the kept grants, and reads where only a grant with a call limit matches", async () => {
    const { fx, principal, recording, reads } = await recorded();
    const mayCover = () => fx.runtime.grants.mayCover(principal, create);

    recording.clear();
    expect([await mayCover(), await mayCover()]).toEqual([false, false]);
    expect(reads()).toBe(1);
    await grant(fx, fx.store, principal, { maxCalls: 1 });
    recording.clear();
    expect([await mayCover(), await mayCover()]).toEqual([true, true]);
    expect(reads()).toBe(2);
    expect(await outcome(fx.runtime, principal, "the one call")).toBe("ran");
    expect(await mayCover()).toBe(false);
    const open = await grant(fx, fx.store, principal);
    recording.clear();
    expect([await mayCover(), await mayCover()]).toEqual([true, true]);
    expect(reads()).toBe(1);
    await revoke(fx.runtime, open);
    expect(await mayCover()).toBe(false);
    expect(await fx.runtime.grants.mayCover(principal, { ...create, version: 2 })).toBe(false);
  });

  it("SQLite: a grant revoked or made through another connection to the file is seen by the very next call here", async () => {
    const a = await createFixture({ policy: GRANTING, runtime: QUIET });
    fixtures.push(a);
    const b = await a.reopen(QUIET);
    const principal = await a.principal(ASSISTANT);
    for (let round = 0; round < 3; round++) {
      const granted = await grant(a, a.store, principal);
      expect(await outcome(b, principal, `warm ${round}`)).toBe("ran");
      await revoke(a.runtime, granted);
      expect(await outcome(b, principal, `after ${round}`)).toMatch(ASKS);
    }
    expect(a.handlers.executed.filter((call) => (call.input as { title: string }).title.startsWith("after"))).toEqual([]);
  });
});

const gate = await postgresTestGate("PostgreSQL grant cache tests");

describe.skipIf(gate.skip !== undefined)("grants kept in memory, on PostgreSQL", () => {
  const twoInstances = useTwoPostgresInstances(gate, { policy: GRANTING, runtime: QUIET });

  it("revoke on A: B's very next call does not run, and once B hears it, B asks as with no grant; a grant made on A reaches B", async () => {
    const { a, b } = await twoInstances();
    const principal = await a.principal(ASSISTANT);
    for (let round = 0; round < 3; round++) {
      const granted = await grant(a, a.store, principal);
      await expect.poll(() => outcome(b, principal, `warm ${round}`), { timeout: 10_000 }).toBe("ran");
      await revoke(a.runtime, granted);
      // Not heard yet or heard: either way nothing runs (the begin checks the grant again).
      expect(await outcome(b, principal, `after ${round}`)).toMatch(/^CONFIRMATION_REQUIRED/);
      await expect.poll(() => outcome(b, principal, `heard ${round}`), { timeout: 10_000 }).toMatch(ASKS);
    }
    const titles = a.handlers.executed.map((call) => (call.input as { title: string }).title);
    expect(titles.filter((title) => title.startsWith("after") || title.startsWith("heard"))).toEqual([]);
  });

  it("while B cannot hear A, B reads grants from the store on every call", async () => {
    const { a, b, proxy } = await twoInstances();
    const principal = await a.principal(ASSISTANT);
    const granted = await grant(a, a.store, principal);
    await expect.poll(() => outcome(b, principal, "warm"), { timeout: 10_000 }).toBe("ran");
    proxy.block("instance-b/listen");
    await expect.poll(() => b.toolChanges.hearsOthers(), { timeout: 10_000 }).toBe(false);
    await revoke(a.runtime, granted);
    expect(await outcome(b, principal, "unheard")).toMatch(ASKS);
    await grant(a, a.store, principal);
    expect(await outcome(b, principal, "made unheard")).toBe("ran");
    proxy.unblock();
  });
});
