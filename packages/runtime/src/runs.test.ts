import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import type { Principal } from "./api.js";
import { ASSISTANT, NOTES, TENANT, UNTRUSTED, eachTestFixtureWithAlice, rejection, type RuntimeFixture } from "./testing/fixtures.js";

const create = { providerId: NOTES, tool: "create-record", version: 1 };
const search = { providerId: NOTES, tool: "search-records" };

let fx: RuntimeFixture;
let alice: Principal;
eachTestFixtureWithAlice((made) => ({ fx, alice } = made));

async function tokenIn(runId: string | undefined, principal = alice): Promise<string> {
  const preview = await fx.runtime.preview(principal, create, { title: "x" }, runId === undefined ? {} : { runId });
  return (preview.confirmation as { token: string }).token;
}

describe("runs", () => {
  it("bind calls to their allow list; tokens minted in a run carry it", async () => {
    const run = await fx.runtime.openRun(alice, { allow: [`${NOTES}:create-record`], ttlSeconds: 60 });
    expect(Date.parse(run.expiresAt) - fx.now()).toBeGreaterThan(55_000);
    const token = await tokenIn(run.runId);
    expect(decodeJwt(token).run).toBe(run.runId);
    await expect(fx.runtime.execute(alice, create, { title: "x" }, { confirmationToken: token, runId: run.runId })).resolves.toBeDefined();

    const outside = await rejection(fx.runtime.execute(alice, search, { query: "x" }, { runId: run.runId }));
    expect(outside).toMatchObject({ code: "RUN_DENIED", message: expect.stringContaining("does not allow") });
    expect((await rejection(fx.runtime.preview(alice, search, { query: "x" }, { runId: run.runId }))).code).toBe("RUN_DENIED");
    const events = (await fx.runtime.admin.listActivity(TENANT, { limit: 5 })).events;
    expect(events[0]).toMatchObject({ outcome: "denied", errorCode: "RUN_DENIED" });
  });

  it("a token minted in a run does not work outside it, nor one minted outside inside it", async () => {
    const run = await fx.runtime.openRun(alice, { allow: ["*"], ttlSeconds: 60 });
    const inRun = await tokenIn(run.runId);
    expect((await rejection(fx.runtime.execute(alice, create, { title: "x" }, { confirmationToken: inRun }))).code).toBe("CONFIRMATION_MISMATCH");
    const outside = await tokenIn(undefined);
    expect((await rejection(fx.runtime.execute(alice, create, { title: "x" }, { confirmationToken: outside, runId: run.runId }))).code).toBe(
      "CONFIRMATION_MISMATCH",
    );
  });

  it("deny a closed run, an expired run, an unknown run", async () => {
    const closed = await fx.runtime.openRun(alice, { allow: ["*"], ttlSeconds: 60 });
    await fx.runtime.execute(alice, search, { query: "x" }, { runId: closed.runId });
    await fx.runtime.closeRun(alice, closed.runId);
    await fx.runtime.closeRun(alice, closed.runId);
    expect(await rejection(fx.runtime.execute(alice, search, { query: "x" }, { runId: closed.runId }))).toMatchObject({
      code: "RUN_DENIED",
      message: expect.stringContaining("closed"),
    });

    const expiring = await fx.runtime.openRun(alice, { allow: ["*"], ttlSeconds: 5 });
    fx.advance(5_000);
    expect(await rejection(fx.runtime.execute(alice, search, { query: "x" }, { runId: expiring.runId }))).toMatchObject({
      code: "RUN_DENIED",
      message: expect.stringContaining("expired"),
    });
    expect((await rejection(fx.runtime.execute(alice, search, { query: "x" }, { runId: "made-up" }))).code).toBe("RUN_DENIED");
    // A malformed id is refused for its shape before any store query.
    expect((await rejection(fx.runtime.execute(alice, search, { query: "x" }, { runId: "x".repeat(500) }))).code).toBe("INPUT_INVALID");
  });

  it("belong to their caller and actor: nobody else may use or close them", async () => {
    const run = await fx.runtime.openRun(alice, { allow: ["*"], ttlSeconds: 60 });
    const otherCaller = await fx.principal(UNTRUSTED);
    const bob = await fx.principal(ASSISTANT, { sub: "bob" });
    for (const principal of [otherCaller, bob]) {
      expect((await rejection(fx.runtime.execute(principal, search, { query: "x" }, { runId: run.runId }))).code).toBe("RUN_DENIED");
      expect((await rejection(fx.runtime.closeRun(principal, run.runId))).code).toBe("RUN_DENIED");
    }
    await expect(fx.runtime.execute(alice, search, { query: "x" }, { runId: run.runId })).resolves.toBeDefined();
  });

  it("narrow, never widen: a run allowing a denied tool does not make it callable", async () => {
    await fx.runtime.admin.setPolicy(TENANT, {
      rules: [
        { tools: "*", decision: "allow" },
        { tools: `${NOTES}:search-records`, decision: "deny" },
      ],
    });
    const run = await fx.runtime.openRun(alice, { allow: ["*"], ttlSeconds: 60 });
    expect((await rejection(fx.runtime.execute(alice, search, { query: "x" }, { runId: run.runId }))).code).toBe("PERMISSION_DENIED");
  });

  it("refuse a malformed allow list or lifetime, listing every problem", async () => {
    const error = await rejection(fx.runtime.openRun(alice, { allow: ["*", "NOT A PATTERN", ""], ttlSeconds: 0 }));
    expect(error.code).toBe("INPUT_INVALID");
    expect((error.data.issues as { path: string }[]).map((issue) => issue.path)).toEqual(["/allow/1", "/allow/2", "/ttlSeconds"]);
    expect((await rejection(fx.runtime.openRun(alice, { allow: [], ttlSeconds: 10 }))).code).toBe("INPUT_INVALID");
  });

  it("hold across instances", async () => {
    const run = await fx.runtime.openRun(alice, { allow: [`${NOTES}:search-records`], ttlSeconds: 60 });
    const other = await fx.reopen();
    await expect(other.execute(alice, search, { query: "x" }, { runId: run.runId })).resolves.toBeDefined();
    await other.closeRun(alice, run.runId);
    expect((await rejection(fx.runtime.execute(alice, search, { query: "x" }, { runId: run.runId }))).code).toBe("RUN_DENIED");
  });
});
