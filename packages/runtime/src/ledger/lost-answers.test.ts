/**
 * DESIGN's lost-answer rule (the begin transaction's) at every commit, on both stores: the store's answer to a write is lost (the write
 * committed and the answer never came, or the write never arrived). The caller then gets either
 * STORE_UNAVAILABLE with no row written and no effect, or the operation's id, in its answer and in the
 * activity event. PostgreSQL loses them in the network (the project's TCP proxy drops the server's answer
 * after it committed, or the request before the server saw it); SQLite at the store seam.
 */
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { HookDeclaration } from "@toolpact/contract";
import type { Principal } from "../api.js";
import { createPostgresStore } from "../store/postgres/postgres-store.js";
import { createFaultyStores, type LosableWrite } from "../testing/faulty-store.js";
import { NOTES, TENANT, createFixture, rejection, type RuntimeFixture } from "../testing/fixtures.js";
import { postgresTestGate } from "../testing/index.js";
import { usePostgresHarness } from "../testing/postgres-harness.js";
import { addSeamPlugin, seamPlugin, tenantEvents } from "../testing/seam-plugins.js";
import { createTcpProxy } from "../testing/tcp-proxy.js";

const create = { providerId: NOTES, tool: "create-record", version: 1 };
const send = { providerId: NOTES, tool: "send-summary" };
const search = { providerId: NOTES, tool: "search-records" };
const HOOKS = "com.example.hooks";

/** A runtime whose store can lose one write's answer or request, and a way to count what it holds. */
interface LossWorld {
  readonly fx: RuntimeFixture;
  /** Arms a loss for the next `write`; resolves once it happened. */
  lose(what: "answer" | "request", write: LosableWrite): Promise<void>;
  /** Rows of the fixture tenant's table. */
  rows(table: "operations" | "outbox" | "consumed_tokens"): Promise<number>;
}

/** The same scenarios against each store. */
function describeLostAnswers(name: string, makeWorld: () => Promise<LossWorld>): void {
  describe(name, () => {
    let world: LossWorld;
    let fx: RuntimeFixture;
    let alice: Principal;
    beforeEach(async () => {
      world = await makeWorld();
      fx = world.fx;
      alice = await fx.principal();
    });
    afterEach(async () => {
      await fx.dispose();
    });

    const tokenFor = async (ref: { providerId: string; tool: string; version?: number }, input: unknown) =>
      ((await fx.runtime.preview(alice, ref, input)).confirmation as { token: string }).token;
    const eventOf = async (operationId: unknown) => (await tenantEvents(fx, "call")).find((event) => event.operationId === operationId);

    it("begin: a begin that committed goes on, and the answer and the activity event name its operation; recovery finds nothing to redo", async () => {
      const token = await tokenFor(send, { title: "t" });
      const lost = world.lose("answer", "beginOperation");
      const answer = await fx.runtime.execute(alice, send, { title: "t" }, { confirmationToken: token });
      await lost;
      expect(answer).toMatchObject({ operationId: expect.any(String), result: { sent: "t" } });
      expect(fx.handlers.executed).toHaveLength(1);
      expect(await eventOf(answer.operationId)).toMatchObject({ outcome: "succeeded", confirmationId: expect.any(String) });
      expect(await fx.runtime.getOperation(alice, answer.operationId)).toMatchObject({ state: "succeeded" });
      fx.advance(60_000);
      expect(await fx.runtime.settleExpiredLeases()).toBe(0);
      expect(fx.handlers.executed).toHaveLength(1);
      // the token was consumed by that one operation
      expect((await rejection(fx.runtime.execute(alice, send, { title: "t" }, { confirmationToken: token }))).code).toBe("CONFIRMATION_USED");
    });

    it("begin: a begin that never reached the store is STORE_UNAVAILABLE: no row, no effect, and the token is still good", async () => {
      const token = await tokenFor(create, { title: "t" });
      const operations = await world.rows("operations");
      const lost = world.lose("request", "beginOperation");
      const error = await rejection(fx.runtime.execute(alice, create, { title: "t" }, { confirmationToken: token }));
      await lost;
      expect(error.code).toBe("STORE_UNAVAILABLE");
      expect(error.message).toContain("nothing ran");
      expect(error.data.operationId).toBeUndefined();
      expect(await world.rows("operations")).toBe(operations);
      expect(await world.rows("consumed_tokens")).toBe(0);
      expect(fx.handlers.executed).toHaveLength(0);
      await expect(fx.runtime.execute(alice, create, { title: "t" }, { confirmationToken: token })).resolves.toMatchObject({ result: { id: "rec-1" } });
    });

    it("settle: a settle that committed answers the result, once, with its operation id in the event", async () => {
      const token = await tokenFor(create, { title: "t" });
      const lost = world.lose("answer", "settleOperation");
      const answer = await fx.runtime.execute(alice, create, { title: "t" }, { confirmationToken: token });
      await lost;
      expect(answer.result).toEqual({ id: "rec-1", targetId: "rec-1" });
      expect(await eventOf(answer.operationId)).toMatchObject({ outcome: "succeeded", targetId: "rec-1" });
      expect((await tenantEvents(fx, "call")).filter((event) => event.operationId === answer.operationId)).toHaveLength(1);
    });

    it("settle with staged reactions: the settle that carried them committed, and the outbox holds them once", async () => {
      const hook: HookDeclaration = { name: "notify", point: "afterTool", appliesTo: [`${NOTES}:*`], timeoutMs: 1_000 };
      const sdk = await addSeamPlugin(fx, seamPlugin(HOOKS, { hooks: [hook] }));
      sdk.hooks.provide("notify", () => [{ kind: "notify-owner", payload: { n: 1 } }]);
      const token = await tokenFor(create, { title: "t" });
      const lost = world.lose("answer", "settleOperation");
      const answer = await fx.runtime.execute(alice, create, { title: "t" }, { confirmationToken: token });
      await lost;
      expect(await eventOf(answer.operationId)).toMatchObject({ outcome: "succeeded" });
      expect(await world.rows("outbox")).toBe(1);
      const claimed = await fx.runtime.admin.claimOutbox(TENANT, { limit: 10, leaseSeconds: 30 });
      expect(claimed.map((item) => [item.kind, item.operationId])).toEqual([["notify-owner", answer.operationId]]);
    });

    it("a read's one commit: recorded, its result is answered; never recorded, the result is withheld and nothing is written", async () => {
      const recorded = world.lose("answer", "recordSettledOperation");
      const answer = await fx.runtime.execute(alice, search, { query: "kept" });
      await recorded;
      expect(answer.result).toEqual({ hits: ["kept"] });
      expect(await eventOf(answer.operationId)).toMatchObject({ outcome: "succeeded", effect: "read" });

      const operations = await world.rows("operations");
      const lost = world.lose("request", "recordSettledOperation");
      const error = await rejection(fx.runtime.execute(alice, search, { query: "withheld" }));
      await lost;
      expect(error.code).toBe("STORE_UNAVAILABLE");
      expect(JSON.stringify(error)).not.toContain("withheld");
      expect(await world.rows("operations")).toBe(operations);
    });

    it("approval: a decision that committed stands, and one that did not is STORE_UNAVAILABLE with the request still pending", async () => {
      const untrusted = await fx.principal("com.example.untrusted");
      const ask = async (title: string) => {
        const preview = await fx.runtime.preview(untrusted, create, { title });
        return (preview.confirmation as { requestId: string }).requestId;
      };
      const person = { tenantId: TENANT, userId: "alice" };
      const kept = await ask("kept");
      const approved = world.lose("answer", "transitionConfirmation");
      await expect(fx.runtime.decideConfirmation(person, kept, "approve")).resolves.toEqual({ requestId: kept, status: "approved" });
      await approved;
      const status = await fx.runtime.waitConfirmation(untrusted, kept, { timeoutMs: 0 });
      expect(status.status).toBe("approved");
      const token = (status as { token: string }).token;
      await expect(fx.runtime.execute(untrusted, create, { title: "kept" }, { confirmationToken: token })).resolves.toMatchObject({ result: { id: "rec-1" } });
      expect((await tenantEvents(fx, "confirmation")).filter((event) => event.confirmationId === kept && event.phase === "approve")).toHaveLength(1);

      const dropped = await ask("dropped");
      const lost = world.lose("request", "transitionConfirmation");
      expect((await rejection(fx.runtime.decideConfirmation(person, dropped, "approve"))).code).toBe("STORE_UNAVAILABLE");
      await lost;
      expect(await fx.runtime.getConfirmation(untrusted, dropped)).toMatchObject({ status: "pending" });
      await expect(fx.runtime.decideConfirmation(person, dropped, "deny")).resolves.toEqual({ requestId: dropped, status: "denied" });
    });
  });
}

describeLostAnswers("lost answers on SQLite (at the store seam)", async () => {
  const faults = createFaultyStores();
  const fx = await createFixture({ wrapStore: (store) => faults.wrap(store), runtime: { recoveryIntervalMs: 0 } });
  return {
    fx,
    lose: (what, write) => faults.lose({ what, write }),
    async rows(table) {
      const db = new Database(fx.dbPath, { readonly: true });
      try {
        return Number(db.prepare(`SELECT count(*) FROM ${table} WHERE tenant_id = ?`).pluck().get(TENANT));
      } finally {
        db.close();
      }
    },
  };
});

describe("lost answers on SQLite when the store cannot tell", () => {
  it("a begin whose fate cannot be told answers OUTCOME_UNKNOWN with the operation id, in the answer and the activity event", async () => {
    const faults = createFaultyStores();
    const fx = await createFixture({ wrapStore: (store) => faults.wrap(store), runtime: { recoveryIntervalMs: 0 } });
    try {
      const alice = await fx.principal();
      const token = ((await fx.runtime.preview(alice, create, { title: "t" })).confirmation as { token: string }).token;
      const lost = faults.lose({ what: "answer", write: "beginOperation", settled: false });
      const error = await rejection(fx.runtime.execute(alice, create, { title: "t" }, { confirmationToken: token }));
      await lost;
      expect(error.code).toBe("OUTCOME_UNKNOWN");
      const operationId = error.data.operationId as string;
      expect(operationId).toMatch(/^[0-9a-f-]{36}$/);
      expect((await tenantEvents(fx, "call")).find((event) => event.operationId === operationId)).toMatchObject({ errorCode: "OUTCOME_UNKNOWN" });
      // it did begin (the write committed): recovery settles it once its lease expires, nothing ran twice
      expect(await fx.runtime.getOperation(alice, operationId)).toMatchObject({ state: "running" });
      fx.advance(60_000);
      expect(await fx.runtime.settleExpiredLeases()).toBe(1);
      expect(await fx.runtime.getOperation(alice, operationId)).toMatchObject({ state: "unknown" });
      expect(fx.handlers.executed).toHaveLength(0);
    } finally {
      await fx.dispose();
    }
  });
});

const gate = await postgresTestGate("PostgreSQL lost-answer tests");

describe.skipIf(gate.skip !== undefined)("PostgreSQL", () => {
  const { url, freshSchema, count, proxies } = usePostgresHarness(gate);

  describeLostAnswers("lost answers on PostgreSQL (in the network)", async () => {
    const target = new URL(url);
    const proxy = await createTcpProxy({ targetHost: target.hostname, targetPort: Number(target.port || 5432) });
    proxies.push(proxy);
    const proxied = new URL(url);
    proxied.hostname = proxy.host;
    proxied.port = String(proxy.port);
    const schema = freshSchema();
    const fx = await createFixture({
      openStore: () => createPostgresStore({ url: proxied.toString(), schema }),
      runtime: { recoveryIntervalMs: 0 },
    });
    const markers: Record<LosableWrite, string> = {
      beginOperation: "toolpact_begin",
      settleOperation: "toolpact_settle",
      recordSettledOperation: "toolpact_record",
      transitionConfirmation: "toolpact_transition_live",
    };
    return {
      fx,
      lose: (what, write) => proxy.lose(what, markers[write]),
      rows: (table) => count(`SELECT count(*) AS n FROM ${schema}.${table} WHERE tenant_id = $1`, [TENANT]),
    };
  });
});
