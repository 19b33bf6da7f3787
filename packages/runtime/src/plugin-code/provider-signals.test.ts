/**
 * What a provider may tell the runtime by what it throws: its effect's answer was lost (unknown, never
 * "failed", for an effect), it is at capacity (RATE_LIMITED before any operation), or it refuses with a
 * message the caller sees made visible and bounded, never stored. Anything else stays PROVIDER_FAILED
 * with its class only.
 */
import type { Manifest } from "@toolpact/contract";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Principal } from "../api.js";
import { createFixture, TENANT, tool, type RuntimeFixture } from "../testing/fixtures.js";
import { PROVIDER_REFUSAL_MAX_CHARS, ProviderBusy, ProviderOutcomeUnknown, ProviderRefusal } from "@toolpact/contract";

const ID = "com.example.remote";
const manifest: Manifest = {
  id: ID,
  version: "1.0.0",
  permissions: ["tools:provide"],
  tools: [tool({ name: "send", effect: "external", inputSchema: { type: "object" } }), tool({ name: "look", effect: "read", inputSchema: { type: "object" } })],
  gates: [],
  hooks: [],
  guards: [],
};

let fx: RuntimeFixture;
let alice: Principal;
let thrown: { authorize?: unknown; execute?: unknown };
let executed = 0;

beforeEach(async () => {
  thrown = {};
  executed = 0;
  fx = await createFixture({ runtime: { recoveryIntervalMs: 0 } });
  fx.runtime.registerPlugin(manifest);
  const handler = {
    authorize: () => {
      if (thrown.authorize !== undefined) throw thrown.authorize;
      return true;
    },
    execute: () => {
      executed++;
      if (thrown.execute !== undefined) throw thrown.execute;
      return { ok: true };
    },
  };
  fx.runtime.sdkFor(ID).tools.provide("send", handler);
  fx.runtime.sdkFor(ID).tools.provide("look", handler);
  await fx.runtime.admin.installPlugin(TENANT, ID);
  alice = await fx.principal();
});

afterEach(async () => {
  await fx.dispose();
});

async function execute(name: "send" | "look"): Promise<{ code: string; message: string; data: Record<string, unknown> }> {
  const ref = { providerId: ID, tool: name };
  const preview = await fx.runtime.preview(alice, ref, {});
  const token = preview.confirmation.required && preview.confirmation.mode === "token" ? preview.confirmation.token : undefined;
  return fx.runtime.execute(alice, ref, {}, token === undefined ? {} : { confirmationToken: token }).then(
    () => {
      throw new Error("expected a refusal");
    },
    (error: { code: string; message: string; data: Record<string, unknown> }) => error,
  );
}

describe("provider signals", () => {
  it("ProviderOutcomeUnknown: an external effect is unknown with its operation id; a read simply failed", async () => {
    thrown.execute = new ProviderOutcomeUnknown("connection closed");
    const lost = await execute("send");
    expect(lost).toMatchObject({ code: "OUTCOME_UNKNOWN", data: { errorClass: "ProviderOutcomeUnknown" } });
    expect(lost.message).toMatch(/lost its answer; its effect may or may not have happened \(operation [0-9a-f-]+\)/);
    expect(await fx.runtime.getOperation(alice, lost.data.operationId as string)).toMatchObject({ state: "unknown" });
    expect(await execute("look")).toMatchObject({ code: "PROVIDER_FAILED", data: { errorClass: "ProviderOutcomeUnknown" } });
  });

  it("ProviderBusy from authorize: RATE_LIMITED with retryAfterMs, and execute never runs", async () => {
    thrown.authorize = new ProviderBusy("16 calls in flight", 1000);
    const busy = await fx.runtime.execute(alice, { providerId: ID, tool: "look" }, {}).catch((error: unknown) => error);
    expect(busy).toMatchObject({ code: "RATE_LIMITED", data: { retryAfterMs: 1000, tool: `${ID}:look@1` } });
    expect(executed).toBe(0);
  });

  it("ProviderRefusal: the caller reads the message with hidden characters made visible and long text cut; a plain Error's message never shows", async () => {
    thrown.execute = new ProviderRefusal(`no such file\u001b[2J\u202Egnp.exe ${"x".repeat(PROVIDER_REFUSAL_MAX_CHARS)}`);
    const refused = await execute("send");
    expect(refused.code).toBe("PROVIDER_FAILED");
    expect(refused.message).toContain("and says: no such file\\u{1b}[2J\\u{202e}gnp.exe xxx");
    expect(refused.message.endsWith("… (cut)")).toBe(true);
    expect(await fx.runtime.getOperation(alice, refused.data.operationId as string)).toMatchObject({ state: "failed" });
    // A provider built against its own copy of @toolpact/client throws its copy's class: the brand is what counts.
    const foreign = Object.assign(new Error("from another copy"), { [Symbol.for("toolpact.providerSignal")]: "refusal" });
    thrown.execute = foreign;
    expect((await execute("send")).message).toContain("and says: from another copy");
    thrown.execute = new Error("secret-laden message");
    const plain = await execute("send");
    expect(plain.message).not.toContain("secret-laden");
    expect(plain.message).toContain("its message is not forwarded");
  });

  it("a signal's brand, message and wait are read without letting a hostile object's throw through", async () => {
    // A forged refusal whose message getter throws a secret; a forged busy whose wait is absurd.
    thrown.execute = Object.defineProperty(Object.assign(Object.create(null), { [Symbol.for("toolpact.providerSignal")]: "refusal" }), "message", {
      get: () => {
        throw new Error("hunter2");
      },
    });
    const refused = await execute("look");
    expect(refused).toMatchObject({ code: "PROVIDER_FAILED" });
    expect(refused.message).not.toContain("hunter2");
    thrown.execute = undefined;
    thrown.authorize = { [Symbol.for("toolpact.providerSignal")]: "busy", message: "full", retryAfterMs: 1e12 };
    const busy = await fx.runtime.execute(alice, { providerId: ID, tool: "look" }, {}).catch((error: unknown) => error);
    expect(busy).toMatchObject({ code: "RATE_LIMITED", data: { retryAfterMs: 60_000 } });
  });
});
