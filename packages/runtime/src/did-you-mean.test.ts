/**
 * Mistyped names get "did you mean": tools and providers a caller names (only among what its tenant has
 * installed), and plugin ids an admin names (among what the host loads). Malformed admin targets are
 * INPUT_INVALID before any store query.
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "./api.js";
import { NOTES, TENANT, callerManifest, eachTestFixtureWithAlice, rejection, type RuntimeFixture } from "./testing/fixtures.js";

let fx: RuntimeFixture;
let alice: Principal;
eachTestFixtureWithAlice((made) => ({ fx, alice } = made));

describe("a caller's mistyped names", () => {
  it("a tool name one letter off", async () => {
    const refused = await rejection(fx.runtime.execute(alice, { providerId: NOTES, tool: "serch-records" }, { query: "x" }));
    expect(refused.code).toBe("TOOL_NOT_FOUND");
    expect(refused.message).toBe('plugin "com.example.notes" declares no tool "serch-records"; did you mean "search-records"?');
  });

  it("a provider id one letter off", async () => {
    const refused = await rejection(fx.runtime.execute(alice, { providerId: "com.example.note", tool: "search-records" }, { query: "x" }));
    expect(refused.code).toBe("PROVIDER_NOT_FOUND");
    expect(refused.message).toBe('no plugin "com.example.note" is loaded in this host; did you mean "com.example.notes"?');
  });

  it("suggests no provider the tenant has not installed", async () => {
    fx.runtime.registerPlugin({ ...callerManifest("com.example.ledger"), permissions: ["tools:provide"], tools: [] });
    const other = { ...callerManifest("com.example.ledgers"), permissions: ["tools:provide" as const] };
    fx.runtime.registerPlugin({
      ...other,
      tools: [
        {
          name: "post",
          version: 1,
          effect: "read",
          requiresConfirmation: false,
          minVerificationLevel: 0,
          recovery: "none",
          timeoutMs: 1000,
          inputSchema: { type: "object" },
        },
      ],
    });
    // Loaded in the host, but not installed for alice's tenant: nothing to suggest.
    const refused = await rejection(fx.runtime.execute(alice, { providerId: "com.example.ledgerz", tool: "post" }, {}));
    expect(refused.message).toBe('no plugin "com.example.ledgerz" is loaded in this host');
  });
});

describe("an admin's targets", () => {
  it("a plugin id the host does not load: did you mean, and where to load it from", async () => {
    const refused = await rejection(fx.runtime.admin.installPlugin(TENANT, "com.example.notez"));
    expect(refused.code).toBe("PROVIDER_NOT_FOUND");
    expect(refused.message).toMatchInlineSnapshot(
      `"no plugin "com.example.notez" is loaded in this host; did you mean "com.example.notes"?: with toolpact serve, add the plugin's folder (the one holding its plugin.json, and its module unless it only calls tools) to "plugins" in toolpact.config.json and restart; a host embedding the runtime calls runtime.registerPlugin(manifest) first"`,
    );
  });

  it("a tenant nothing is configured for: did you mean the configured one", async () => {
    const refused = await rejection(fx.runtime.admin.setPluginEnabled("tenant-aa", NOTES, false));
    expect(refused.code).toBe("PROVIDER_NOT_FOUND");
    expect(refused.message).toBe(
      'plugin "com.example.notes" is not installed for tenant "tenant-aa": install it first with admin.installPlugin; no tenant "tenant-aa" is configured in this host; did you mean "tenant-a"?',
    );
    const revoked = await rejection(fx.runtime.admin.revokePluginKey("tenant-aa", "key-1"));
    expect(revoked.code).toBe("INPUT_INVALID");
    expect(revoked.message).toMatch(/no tenant "tenant-aa" is configured in this host; did you mean "tenant-a"\?$/);
  });

  it("a configured tenant gets no tenant hint", async () => {
    const refused = await rejection(
      fx.runtime.admin.setPluginEnabled(TENANT, "com.example.assistant", false).then(() => fx.runtime.admin.revokePluginKey(TENANT, "key-1")),
    );
    expect(refused.message).toBe('tenant "tenant-a" has no live plugin key "key-1"');
  });

  it.each([
    ["upper case", "Com.Example.Notes"],
    ["a space", "com.example notes"],
    ["a NUL", "com.example.notes\u0000"],
    ["empty", ""],
    ["too long", `a${".b".repeat(100)}`],
  ])("a plugin id with %s is INPUT_INVALID", async (_what, pluginId) => {
    const refused = await rejection(fx.runtime.admin.issuePluginKey(TENANT, pluginId));
    expect(refused.code).toBe("INPUT_INVALID");
    expect(refused.data.issues).toEqual([{ path: "/pluginId", message: expect.stringContaining("not a plugin id") }]);
  });

  it.each([
    ["a trailing newline", `${TENANT}\n`],
    ["a NUL", `${TENANT}\u0000`],
    ["a right-to-left override", `\u202e${TENANT}`],
    ["a leading space", ` ${TENANT}`],
    ["empty", ""],
    ["too long", "t".repeat(129)],
  ])("a tenant id with %s is INPUT_INVALID", async (_what, tenantId) => {
    const refused = await rejection(fx.runtime.admin.installPlugin(tenantId, NOTES));
    expect(refused.code).toBe("INPUT_INVALID");
    expect(refused.data.issues).toEqual([{ path: "/tenantId", message: expect.stringContaining("a tenant id is 1 to 128 characters") }]);
  });

  it("a tenant id with inner spaces and any script is fine", async () => {
    await fx.runtime.admin.installPlugin("Acme Corp — Zürich", NOTES);
  });
});
