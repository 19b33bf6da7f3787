/**
 * Pins the store calls each call path makes, in order, with their arguments and answers (ids and times
 * masked): a refactoring of the call path must leave these lists as they are.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Manifest } from "@toolpact/contract";
import type { Principal } from "../api.js";
import { createRecordingStore, type RecordingStore } from "../testing/recording-store.js";
import { ALLOW_ALL, NOTES, TENANT, UNTRUSTED, createFixture, rejection, type RuntimeFixture } from "../testing/fixtures.js";

const search = { providerId: NOTES, tool: "search-records" };
const create = { providerId: NOTES, tool: "create-record", version: 1 };
const GUARDS = "com.example.guards";

/** Settings that keep background work out of the recording: no timers, no config refresh during a test. */
const QUIET = { configRefreshMs: 3_600_000, recoveryIntervalMs: 0 } as const;

let fx: RuntimeFixture;
let recording: RecordingStore;
let alice: Principal;

beforeEach(async () => {
  recording = createRecordingStore();
  fx = await createFixture({ runtime: QUIET, wrapStore: (store) => recording.wrap(store) });
  alice = await fx.principal();
});
afterEach(async () => {
  await fx.dispose();
});

/** The token of a token-mode preview. */
async function tokenFor(ref: typeof create, input: unknown): Promise<string> {
  const preview = await fx.runtime.preview(alice, ref, input);
  if (!preview.confirmation.required || preview.confirmation.mode !== "token") throw new Error("expected token mode");
  return preview.confirmation.token;
}

describe("store calls of", () => {
  it("a token-mode preview", async () => {
    recording.clear();
    await fx.runtime.preview(alice, create, { title: "t" });
    expect(recording.lines()).toMatchSnapshot();
  });

  it("a platform-mode preview", async () => {
    const untrusted = await fx.principal(UNTRUSTED);
    recording.clear();
    await fx.runtime.preview(untrusted, create, { title: "t" });
    expect(recording.lines()).toMatchSnapshot();
  });

  it("an execute of a read, then of a confirmed write", async () => {
    await fx.runtime.execute(alice, search, { query: "warm" });
    const token = await tokenFor(create, { title: "t" });
    recording.clear();
    await fx.runtime.execute(alice, search, { query: "x" });
    await fx.runtime.execute(alice, create, { title: "t" }, { confirmationToken: token });
    expect(recording.lines()).toMatchSnapshot();
  });

  it("an idempotent execute and its replay", async () => {
    recording.clear();
    await fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "k-1" });
    await fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "k-1" });
    expect(recording.lines()).toMatchSnapshot();
  });

  it("a confirmation token used twice", async () => {
    const token = await tokenFor(create, { title: "t" });
    await fx.runtime.execute(alice, create, { title: "t" }, { confirmationToken: token });
    recording.clear();
    expect((await rejection(fx.runtime.execute(alice, create, { title: "t" }, { confirmationToken: token }))).code).toBe("CONFIRMATION_USED");
    expect(recording.lines()).toMatchSnapshot();
  });

  it("an execute whose tenant config another instance changed after it was read", async () => {
    await fx.runtime.execute(alice, search, { query: "warm" });
    const other = await fx.reopen({ ...QUIET, instanceId: "instance-b", wrapStore: (store) => store });
    await other.admin.setPolicy(TENANT, ALLOW_ALL);
    recording.clear();
    await fx.runtime.execute(alice, search, { query: "x" });
    expect(recording.lines()).toMatchSnapshot();
  });

  it("an execute that timed out", async () => {
    const token = await tokenFor({ providerId: NOTES, tool: "slow-write", version: 1 }, { title: "t" });
    recording.clear();
    const error = await rejection(fx.runtime.execute(alice, { providerId: NOTES, tool: "slow-write" }, { title: "t" }, { confirmationToken: token }));
    expect(error.code).toBe("OUTCOME_UNKNOWN");
    expect(recording.lines()).toMatchSnapshot();
  });

  it("an execute whose output a guard withheld", async () => {
    const guards: Manifest = {
      id: GUARDS,
      version: "1.0.0",
      permissions: ["tools:guard"],
      tools: [],
      gates: [],
      hooks: [],
      guards: [{ name: "redact", appliesTo: [`${NOTES}:search-records`] }],
    };
    fx.runtime.registerPlugin(guards);
    fx.runtime.sdkFor(GUARDS).guards.provide("redact", () => ({ decision: "withhold", reason: "secret" }));
    await fx.runtime.admin.installPlugin(TENANT, GUARDS);
    await fx.runtime.admin.setActivation(TENANT, GUARDS, { guards: ["redact"] });
    recording.clear();
    expect((await rejection(fx.runtime.execute(alice, search, { query: "x" }, { idempotencyKey: "k" }))).code).toBe("GUARD_REJECTED");
    expect(recording.lines()).toMatchSnapshot();
  });
});
