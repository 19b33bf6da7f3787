/**
 * Pins the store calls of both recovery paths (re-invoked, settled unknown) on the instance that
 * recovers, in order, ids and times masked.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Manifest } from "@toolpact/contract";
import type { Principal } from "../api.js";
import type { ToolpactRuntime } from "../runtime.js";
import { createRecordingStore, type RecordingStore } from "../testing/recording-store.js";
import { TENANT, createFixture, tool, type RuntimeFixture } from "../testing/fixtures.js";

const PAYMENTS = "com.example.payments";
const manifest: Manifest = {
  id: PAYMENTS,
  version: "1.0.0",
  permissions: ["tools:provide"],
  tools: [
    tool({ name: "charge", effect: "external", recovery: "idempotent", requiresConfirmation: false, timeoutMs: 10_000 }),
    tool({ name: "ship", effect: "write", recovery: "none", requiresConfirmation: false, timeoutMs: 10_000 }),
  ],
  gates: [],
  hooks: [],
  guards: [],
};

let fx: RuntimeFixture;
let alice: Principal;
let release: (() => void) | undefined;
let invoked: string[];

/** Registers the payments provider; on the first instance each call hangs until `release`. */
function loadPayments(runtime: ToolpactRuntime, hang: boolean): void {
  runtime.registerPlugin(manifest);
  for (const name of ["charge", "ship"]) {
    runtime.sdkFor(PAYMENTS).tools.provide(name, {
      execute: async (_input: unknown, ctx) => {
        invoked.push(`${name} ${ctx.operationId}`);
        if (hang) await new Promise<void>((resolve) => (release = resolve));
        return { done: true };
      },
    });
  }
}

beforeEach(async () => {
  invoked = [];
  release = undefined;
  fx = await createFixture({ runtime: { leaseMs: 1000, recoveryIntervalMs: 0, configRefreshMs: 3_600_000, instanceId: "instance-a" } });
  loadPayments(fx.runtime, true);
  await fx.runtime.admin.installPlugin(TENANT, PAYMENTS);
  await fx.runtime.admin.setRecoveryPolicy(TENANT, { rules: [{ tools: `${PAYMENTS}:charge`, retry: "reinvoke" }] });
  alice = await fx.principal();
});
afterEach(async () => {
  release?.();
  await fx.dispose();
});

/** Starts a call on instance A that hangs, then lets instance B (clock a minute ahead) recover it. */
async function recoverOnPeer(toolName: string): Promise<RecordingStore> {
  const stuck = fx.runtime.execute(alice, { providerId: PAYMENTS, tool: toolName }, { title: "order-7" }).catch((error: unknown) => error);
  const deadline = Date.now() + 5000;
  while (invoked.length === 0) {
    if (Date.now() > deadline) throw new Error("the call never reached the provider");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const recording = createRecordingStore();
  const peer = await fx.reopen({
    clock: () => fx.now() + 60_000,
    recoveryIntervalMs: 0,
    configRefreshMs: 3_600_000,
    instanceId: "instance-b",
    wrapStore: (store) => recording.wrap(store),
  });
  loadPayments(peer, false);
  recording.clear();
  expect(await peer.settleExpiredLeases()).toBe(1);
  release?.();
  await stuck;
  return recording;
}

describe("store calls of recovery", () => {
  it("re-invoking an idempotent tool the tenant lets recovery retry", async () => {
    const recording = await recoverOnPeer("charge");
    expect(invoked).toHaveLength(2);
    expect(recording.lines()).toMatchSnapshot();
  });

  it("settling as unknown a tool that declares no recovery", async () => {
    const recording = await recoverOnPeer("ship");
    expect(invoked).toHaveLength(1);
    expect(recording.lines()).toMatchSnapshot();
  });
});
