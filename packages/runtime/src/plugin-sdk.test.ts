import { describe, expect, it } from "vitest";
import type { ToolExecuteContext } from "@toolpact/contract";
import type { PluginSdk } from "./plugin-sdk.js";
import { ASSISTANT, NOTES, OTHER_TENANT, TENANT, callerManifest, eachTestFixture, rejection, tool, type RuntimeFixture } from "./testing/fixtures.js";

const search = { providerId: NOTES, tool: "search-records" };
const RELAY = "com.example.relay";

let fx: RuntimeFixture;
eachTestFixture((made) => (fx = made));

function expectUndeclared(run: () => void, message?: string, code = "CAPABILITY_UNDECLARED"): void {
  try {
    run();
  } catch (error) {
    expect((error as { code?: string }).code).toBe(code);
    if (message !== undefined) expect((error as Error).message).toContain(message);
    return;
  }
  throw new Error(`expected ${code}`);
}

describe("capability bound", () => {
  it("lets a plugin provide only tools its manifest declares", () => {
    const sdk = fx.runtime.sdkFor(NOTES);
    const handler = { execute: () => ({}) };
    expectUndeclared(() => sdk.tools.provide("drop-table", handler), "declares no such tool");
    expectUndeclared(() => sdk.tools.provide("search-records@2", handler), "only in version 1");
    expectUndeclared(() => sdk.tools.provide("create-record", handler), 'provide("create-record@2"');
    expectUndeclared(() => sdk.tools.provide("search-records", handler), "already has a handler", "HANDLER_INVALID");
    expectUndeclared(() => sdk.tools.provide("unprovided", {} as never), "execute(input, ctx)", "HANDLER_INVALID");
  });

  it("lets a plugin provide only under its own id", () => {
    const assistant = fx.runtime.sdkFor(ASSISTANT);
    const handler = { execute: () => ({}) };
    expectUndeclared(() => assistant.tools.provide("unprovided", handler));
    expectUndeclared(() => assistant.tools.provide(`${NOTES}:unprovided`, handler));
    expectUndeclared(() => assistant.tools.provideAll({ providerId: NOTES, tools: [{ name: "unprovided", version: 1, handler }] }), "only under its own id");
    // The host's mistake, said as one (a TypeError naming the fix), not a plugin's CAPABILITY_UNDECLARED.
    expect(() => fx.runtime.sdkFor("com.example.ghost")).toThrow(TypeError);
    expect(() => fx.runtime.sdkFor("com.example.ghost")).toThrow(/not registered in this host: call registerPlugin\(manifest\) before sdkFor/);
  });

  it("registers nothing from a provider definition with one bad entry", async () => {
    const sdk = fx.runtime.sdkFor(NOTES);
    const handler = { execute: () => ({ ok: true }) };
    expectUndeclared(() =>
      sdk.tools.provideAll({
        providerId: NOTES,
        tools: [
          { name: "unprovided", version: 1, handler },
          { name: "invented", version: 1, handler },
        ],
      }),
    );
    const principal = await fx.principal();
    expect((await rejection(fx.runtime.execute(principal, { providerId: NOTES, tool: "unprovided" }, { title: "x" }))).code).toBe("HANDLER_MISSING");
    sdk.tools.provideAll({ providerId: NOTES, tools: [{ name: "unprovided", version: 1, handler }] });
    await expect(fx.runtime.execute(principal, { providerId: NOTES, tool: "unprovided" }, { title: "x" })).resolves.toMatchObject({
      result: { ok: true },
    });
  });

  it("refuses a second registration of a plugin id", () => {
    expect(() => fx.runtime.registerPlugin(callerManifest(ASSISTANT))).toThrow(/already registered/);
  });
});

describe("calling tools in process", () => {
  it("refuses caller methods outside a provider call without an actor", async () => {
    const sdk = fx.runtime.sdkFor(ASSISTANT);
    expect((await rejection(sdk.tools.execute(search, { query: "x" }))).code).toBe("UNAUTHENTICATED");
    expect((await rejection(sdk.tools.list())).code).toBe("UNAUTHENTICATED");
  });

  it("acts for the actor of withActor, as the SDK's own plugin, in the token's tenant", async () => {
    const sdk = fx.runtime.sdkFor(ASSISTANT);
    const bound = sdk.withActor(await fx.actorToken({ sub: "carol", lvl: 2 }));
    expect(bound.pluginId).toBe(ASSISTANT);
    const answer = await bound.tools.execute(search, { query: "x" });
    expect(answer.result).toEqual({ hits: ["x"] });
    expect(fx.handlers.executed[0]!.ctx).toMatchObject({ tenantId: TENANT, callerPluginId: ASSISTANT, actor: { userId: "carol" } });
    expect((await bound.tools.list()).length).toBeGreaterThan(0);
    const preview = await bound.tools.preview({ providerId: NOTES, tool: "create-record", version: 1 }, { title: "t" });
    expect(preview.confirmation.required).toBe(true);
  });

  it("verifies the withActor token like a header: signature, expiry, azp", async () => {
    const sdk = fx.runtime.sdkFor(ASSISTANT);
    const before = fx.runtime.metrics.authFailures;
    expect((await rejection(sdk.withActor("garbage").tools.execute(search, { query: "x" }))).code).toBe("UNAUTHENTICATED");
    const forNotes = sdk.withActor(await fx.actorToken({ azp: NOTES }));
    expect((await rejection(forNotes.tools.execute(search, { query: "x" }))).code).toBe("UNAUTHENTICATED");
    const shortLived = sdk.withActor(await fx.actorToken({}, { expiresInSeconds: 30 }));
    await expect(shortLived.tools.execute(search, { query: "x" })).resolves.toBeDefined();
    fx.advance(40_000);
    expect((await rejection(shortLived.tools.execute(search, { query: "x" }))).code).toBe("UNAUTHENTICATED");
    expect(fx.runtime.metrics.authFailures).toBe(before + 3);
  });

  it("still requires the caller to be installed and enabled for the actor's tenant", async () => {
    const sdk = fx.runtime.sdkFor(ASSISTANT);
    const foreign = sdk.withActor(await fx.actorToken({ tid: OTHER_TENANT }));
    expect((await rejection(foreign.tools.execute(search, { query: "x" }))).code).toBe("PROVIDER_NOT_FOUND");
    await fx.runtime.admin.setPluginEnabled(TENANT, ASSISTANT, false);
    const local = sdk.withActor(await fx.actorToken());
    expect((await rejection(local.tools.execute(search, { query: "x" }))).code).toBe("CALLER_DISABLED");
  });

  it("inside a provider call, acts for that call's actor and tenant as the providing plugin", async () => {
    fx.runtime.registerPlugin(
      callerManifest(RELAY, {
        permissions: ["tools:provide", "tools:call"],
        tools: [tool({ name: "relay", effect: "read", inputSchema: { type: "object", properties: { query: { type: "string" } } } })],
      }),
    );
    const relay: PluginSdk = fx.runtime.sdkFor(RELAY);
    let inner: ToolExecuteContext | undefined;
    relay.tools.provide("relay", {
      execute: async (input: { query: string }, ctx) => {
        inner = ctx;
        return (await relay.tools.execute(search, { query: input.query })).result;
      },
    });
    await fx.runtime.admin.installPlugin(TENANT, RELAY);
    const principal = await fx.principal(ASSISTANT, { sub: "dave" });
    const answer = await fx.runtime.execute(principal, { providerId: RELAY, tool: "relay" }, { query: "deep" });
    expect(answer.result).toEqual({ hits: ["deep"] });
    expect(inner?.callerPluginId).toBe(ASSISTANT);
    expect(fx.handlers.executed[0]!.ctx).toMatchObject({ tenantId: TENANT, callerPluginId: RELAY, actor: { userId: "dave" } });
    // the scope ends with the call
    expect((await rejection(relay.tools.execute(search, { query: "x" }))).code).toBe("UNAUTHENTICATED");
  });
});

describe("the actor of a call ends with the call", () => {
  const WORKER = "com.example.worker";
  const enqueue = { providerId: WORKER, tool: "enqueue" };
  /** What the work a provider left behind came to: "ran", or the error it got. */
  let leftovers: Promise<unknown>[] = [];

  /** Runs `work` from a timer set inside the current call (the way a background loop would). */
  const later = (work: () => Promise<unknown>, delayMs = 20): void => {
    leftovers.push(
      new Promise((resolve) => {
        setTimeout(
          () =>
            resolve(
              work().then(
                () => "ran",
                (error: unknown) => error,
              ),
            ),
          delayMs,
        );
      }),
    );
  };

  /** A provider plugin that may call tools; `enqueue` runs `execute`, `hold` never answers. */
  async function worker(execute: () => unknown): Promise<PluginSdk> {
    leftovers = [];
    fx.runtime.registerPlugin(
      callerManifest(WORKER, {
        permissions: ["tools:provide", "tools:call"],
        tools: [tool({ name: "enqueue", effect: "read" }), tool({ name: "hold", effect: "read", timeoutMs: 50 })],
      }),
    );
    const sdk = fx.runtime.sdkFor(WORKER);
    sdk.tools.provide("enqueue", { execute });
    sdk.tools.provide("hold", {
      execute: () => {
        later(() => sdk.tools.execute(search, { query: "after the timeout" }), 150);
        return new Promise(() => undefined);
      },
    });
    await fx.runtime.admin.installPlugin(TENANT, WORKER);
    return sdk;
  }

  async function expectActsForNobody(): Promise<void> {
    const outcomes = await Promise.all(leftovers);
    expect(outcomes.length).toBeGreaterThan(0);
    for (const outcome of outcomes) {
      expect(outcome).toMatchObject({ code: "UNAUTHENTICATED" });
      expect((outcome as Error).message).toMatch(
        /the call this code was started in has ended; caller methods outside a call need sdk\.withActor\(actorToken\)$/,
      );
    }
  }

  it("a loop started during alice's call cannot act as alice once that call ended", async () => {
    const sdk = await worker(async () => {
      const inside = await sdk.tools.execute(search, { query: "inside" });
      later(() => sdk.tools.execute(search, { query: "queued by alice" }));
      later(() => sdk.tools.list());
      return inside.result;
    });
    const alice = await fx.principal(ASSISTANT, { sub: "alice" });
    expect((await fx.runtime.execute(alice, enqueue, { title: "job" })).result).toEqual({ hits: ["inside"] });
    await expectActsForNobody();
    // inside the call it acted for alice; after it, nothing ran in her name
    expect(fx.handlers.executed.map((call) => [call.input, (call.ctx.actor as { userId: string }).userId])).toEqual([[{ query: "inside" }, "alice"]]);
  });

  it("a synchronous provider's timer acts for nobody, whoever calls next", async () => {
    const sdk = await worker(() => {
      later(() => sdk.tools.execute(search, { query: "background" }));
      return { queued: true };
    });
    const alice = await fx.principal(ASSISTANT, { sub: "alice" });
    const mallory = await fx.principal(ASSISTANT, { sub: "mallory" });
    await fx.runtime.execute(alice, enqueue, { title: "a" });
    // mallory's call runs while alice's leftover timer is pending: it does not revive alice's scope
    await fx.runtime.execute(mallory, enqueue, { title: "m" });
    await expectActsForNobody();
    expect(fx.handlers.executed).toHaveLength(0);
  });

  it("a timer left by a call that timed out acts for nobody", async () => {
    await worker(() => undefined);
    const alice = await fx.principal(ASSISTANT, { sub: "alice" });
    expect((await rejection(fx.runtime.execute(alice, { providerId: WORKER, tool: "hold" }, { title: "x" }))).code).toBe("PROVIDER_FAILED");
    await expectActsForNobody();
    expect(fx.handlers.executed).toHaveLength(0);
  });
});
