/**
 * Pins how often each call path runs plugin code (a provider's preview, authorize and execute, gates,
 * guards, AfterTool hooks): a refactoring must not run any of them once more, or once less.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { Manifest } from "@toolpact/contract";
import type { Principal } from "../api.js";
import { ALLOW_ALL, TENANT, UNTRUSTED, createFixture, rejection, tool, type RuntimeFixture } from "../testing/fixtures.js";

const COUNTED = "com.example.counted";
const SEAMS = "com.example.watchers";
const act = { providerId: COUNTED, tool: "act" };

interface Counts {
  preview: number;
  authorize: number;
  execute: number;
  gate: number;
  guard: number;
  hook: number;
}

let fx: RuntimeFixture;
let alice: Principal;
let counts: Counts;
let behave: { authorize: boolean; gate: string; guard: string; execute: "answer" | "throw" | "hang" };

const manifest: Manifest = {
  id: COUNTED,
  version: "1.0.0",
  permissions: ["tools:provide"],
  tools: [tool({ name: "act", effect: "write", timeoutMs: 50 })],
  gates: [],
  hooks: [],
  guards: [],
};
const watchers: Manifest = {
  id: SEAMS,
  version: "1.0.0",
  permissions: ["tools:gate", "tools:guard", "tools:observe"],
  tools: [],
  gates: [{ name: "gate", appliesTo: [`${COUNTED}:*`] }],
  hooks: [{ name: "hook", point: "afterTool", appliesTo: [`${COUNTED}:*`] }],
  guards: [{ name: "guard", appliesTo: [`${COUNTED}:*`] }],
};

/** The counts so far; counting starts afresh. */
function take(): Counts {
  const taken = counts;
  counts = { preview: 0, authorize: 0, execute: 0, gate: 0, guard: 0, hook: 0 };
  return taken;
}

beforeEach(async () => {
  take();
  behave = { authorize: true, gate: "allow", guard: "pass", execute: "answer" };
  fx = await createFixture({ runtime: { configRefreshMs: 3_600_000, recoveryIntervalMs: 0 } });
  fx.runtime.registerPlugin(manifest);
  fx.runtime.registerPlugin(watchers);
  fx.runtime.sdkFor(COUNTED).tools.provide("act", {
    preview: () => (counts.preview++, { summary: "act" }),
    authorize: () => (counts.authorize++, behave.authorize),
    execute: (_input: unknown, ctx) => {
      counts.execute++;
      if (behave.execute === "throw") throw new Error("no");
      if (behave.execute === "hang") return new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve({})));
      return { done: true };
    },
  });
  const sdk = fx.runtime.sdkFor(SEAMS);
  sdk.gates.provide("gate", () => (counts.gate++, { decision: behave.gate, reason: "no" }) as never);
  sdk.guards.provide("guard", () => (counts.guard++, { decision: behave.guard, reason: "no" }) as never);
  sdk.hooks.provide("hook", () => (counts.hook++, []));
  for (const id of [COUNTED, SEAMS]) await fx.runtime.admin.installPlugin(TENANT, id);
  await fx.runtime.admin.setActivation(TENANT, SEAMS, { gates: ["gate"], guards: ["guard"], hooks: ["hook"] });
  alice = await fx.principal();
  return () => fx.dispose();
});

/** A token-mode preview's token; the counts start afresh after it. */
async function confirmed(): Promise<{ confirmationToken: string }> {
  const preview = await fx.runtime.preview(alice, act, { title: "x" });
  take();
  return { confirmationToken: (preview.confirmation as { token: string }).token };
}

describe("plugin code runs", () => {
  it("in a token-mode and a platform-mode preview", async () => {
    await fx.runtime.preview(alice, act, { title: "x" });
    await fx.runtime.preview(await fx.principal(UNTRUSTED), act, { title: "x" });
    expect(counts).toMatchInlineSnapshot(`
      {
        "authorize": 2,
        "execute": 0,
        "gate": 2,
        "guard": 0,
        "hook": 0,
        "preview": 2,
      }
    `);
  });

  it("in an execute", async () => {
    await fx.runtime.execute(alice, act, { title: "x" }, await confirmed());
    expect(counts).toMatchInlineSnapshot(`
      {
        "authorize": 1,
        "execute": 1,
        "gate": 1,
        "guard": 1,
        "hook": 1,
        "preview": 0,
      }
    `);
  });

  it("in an idempotent replay", async () => {
    await fx.runtime.execute(alice, act, { title: "x" }, { ...(await confirmed()), idempotencyKey: "k" });
    take();
    await fx.runtime.execute(alice, act, { title: "x" }, { idempotencyKey: "k" });
    expect(counts).toMatchInlineSnapshot(`
      {
        "authorize": 1,
        "execute": 0,
        "gate": 1,
        "guard": 0,
        "hook": 0,
        "preview": 0,
      }
    `);
  });

  it("in calls refused by policy, by authorize and by a gate", async () => {
    await fx.runtime.admin.setPolicy(TENANT, { rules: [...ALLOW_ALL.rules, { tools: `${COUNTED}:act`, decision: "deny" }] });
    await rejection(fx.runtime.execute(alice, act, { title: "x" }));
    const denied = take();
    await fx.runtime.admin.setPolicy(TENANT, ALLOW_ALL);
    behave.authorize = false;
    await rejection(fx.runtime.execute(alice, act, { title: "x" }));
    const refused = take();
    behave.authorize = true;
    behave.gate = "block";
    await rejection(fx.runtime.execute(alice, act, { title: "x" }));
    expect({ denied, refused, blocked: counts }).toMatchInlineSnapshot(`
      {
        "blocked": {
          "authorize": 1,
          "execute": 0,
          "gate": 1,
          "guard": 0,
          "hook": 0,
          "preview": 0,
        },
        "denied": {
          "authorize": 0,
          "execute": 0,
          "gate": 0,
          "guard": 0,
          "hook": 0,
          "preview": 0,
        },
        "refused": {
          "authorize": 1,
          "execute": 0,
          "gate": 0,
          "guard": 0,
          "hook": 0,
          "preview": 0,
        },
      }
    `);
  });

  it("in an execute retried because another instance changed the tenant's config", async () => {
    const options = await confirmed();
    const other = await fx.reopen({ recoveryIntervalMs: 0, instanceId: "instance-b" });
    await other.admin.setPolicy(TENANT, ALLOW_ALL);
    await fx.runtime.execute(alice, act, { title: "x" }, options);
    expect(counts).toMatchInlineSnapshot(`
      {
        "authorize": 2,
        "execute": 1,
        "gate": 2,
        "guard": 1,
        "hook": 1,
        "preview": 0,
      }
    `);
  });

  it("in executes whose provider failed, timed out, or whose output a guard withheld", async () => {
    behave.execute = "throw";
    const first = await confirmed();
    await rejection(fx.runtime.execute(alice, act, { title: "x" }, first));
    const failed = take();
    behave.execute = "hang";
    const options = await confirmed();
    await rejection(fx.runtime.execute(alice, act, { title: "x" }, options));
    const timedOut = take();
    behave.execute = "answer";
    behave.guard = "withhold";
    const again = await confirmed();
    await rejection(fx.runtime.execute(alice, act, { title: "x" }, again));
    expect({ failed, timedOut, withheld: counts }).toMatchInlineSnapshot(`
      {
        "failed": {
          "authorize": 1,
          "execute": 1,
          "gate": 1,
          "guard": 0,
          "hook": 1,
          "preview": 0,
        },
        "timedOut": {
          "authorize": 1,
          "execute": 1,
          "gate": 1,
          "guard": 0,
          "hook": 1,
          "preview": 0,
        },
        "withheld": {
          "authorize": 1,
          "execute": 1,
          "gate": 1,
          "guard": 1,
          "hook": 1,
          "preview": 0,
        },
      }
    `);
  });
});
