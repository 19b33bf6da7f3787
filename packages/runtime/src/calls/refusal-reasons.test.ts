/**
 * Refusals that name their cause: a provider's key used as a caller's says the key is the wrong one (not
 * "add tools:call"), and a confirmation asked for by a policy rule or a gate names that rule or gate.
 */
import { describe, expect, it } from "vitest";
import type { Manifest } from "@toolpact/contract";
import type { Principal } from "../api.js";
import { ALLOW_ALL, NOTES, NO_CALL, TENANT, eachTestFixtureWithAlice, rejection, tool, type RuntimeFixture } from "../testing/fixtures.js";
import { addSeamPlugin, gate, seamPlugin } from "../testing/seam-plugins.js";

const search = { providerId: NOTES, tool: "search-records" };
const PROVIDER_ONLY = "com.example.provideronly";

let fx: RuntimeFixture;
let alice: Principal;
eachTestFixtureWithAlice((made) => ({ fx, alice } = made));

describe("a caller without tools:call", () => {
  it("a provider's key used as a caller's: the fix is the caller's key", async () => {
    const manifest: Manifest = {
      id: PROVIDER_ONLY,
      version: "1.0.0",
      permissions: ["tools:provide"],
      tools: [tool({ name: "noop", effect: "read" })],
      gates: [],
      hooks: [],
      guards: [],
    };
    fx.runtime.registerPlugin(manifest);
    await fx.runtime.admin.installPlugin(TENANT, PROVIDER_ONLY);
    const provider = await fx.principal(PROVIDER_ONLY);
    const error = await rejection(fx.runtime.execute(provider, search, { query: "x" }));
    expect(error.code).toBe("PERMISSION_DENIED");
    expect(error.message).toMatchInlineSnapshot(
      `"the plugin key used belongs to "com.example.provideronly", a provider without the "tools:call" permission: call with the calling plugin's own key (admin.issuePluginKey issues one for its id)"`,
    );
  });

  it("a plugin that provides nothing is told to add tools:call (control)", async () => {
    const error = await rejection(fx.runtime.execute(await fx.principal(NO_CALL), search, { query: "x" }));
    expect(error.message).toMatchInlineSnapshot(
      `"plugin "com.example.nocall" does not hold the "tools:call" permission: add it to its manifest's permissions"`,
    );
  });
});

describe("CONFIRMATION_REQUIRED names who asked for it", () => {
  it("a confirm rule of the tenant policy, by its place and pattern", async () => {
    await fx.runtime.admin.setPolicy(TENANT, {
      ...ALLOW_ALL,
      rules: [
        { tools: "*", decision: "allow" },
        { tools: `${NOTES}:search-records`, decision: "confirm" },
        { tools: "*", decision: "confirm" },
      ],
    });
    const error = await rejection(fx.runtime.execute(alice, search, { query: "x" }));
    expect(error.code).toBe("CONFIRMATION_REQUIRED");
    expect(error.message).toMatchInlineSnapshot(
      `"com.example.notes:search-records@1 requires confirmation: the tenant policy's confirm rule /rules/1 (tools "com.example.notes:search-records") asks for it; call preview first and pass its confirmationToken"`,
    );
  });

  it("a gate, by its name", async () => {
    const sdk = await addSeamPlugin(fx, seamPlugin("com.example.gates", { gates: [gate("hours")] }));
    sdk.gates.provide("hours", () => ({ decision: "requireConfirmation", reason: "after hours" }));
    const error = await rejection(fx.runtime.execute(alice, search, { query: "x" }));
    expect(error.code).toBe("CONFIRMATION_REQUIRED");
    expect(error.message).toMatchInlineSnapshot(
      `"com.example.notes:search-records@1 requires confirmation: gate com.example.gates:hours asks for it; call preview first and pass its confirmationToken"`,
    );
  });

  it("the tool's own declaration: the message says only what to do (control)", async () => {
    const error = await rejection(fx.runtime.execute(alice, { providerId: NOTES, tool: "create-record", version: 1 }, { title: "x" }));
    expect(error.message).toMatchInlineSnapshot(`"com.example.notes:create-record@1 requires confirmation: call preview first and pass its confirmationToken"`);
  });
});
