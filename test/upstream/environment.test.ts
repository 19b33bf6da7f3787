/**
 * An upstream stdio server sees only its declared environment (`env` and the `passEnv` names), never the
 * host's secrets nor the SDK's inherited defaults; asking for one of toolpact's secrets stops the host.
 */
import { afterEach, describe, expect, it } from "vitest";
import { declareTools, registryServer, startUpstreamWorld, UPSTREAM_ID, V2_SERVER, type UpstreamWorld } from "./support/upstream-host.js";

let world: UpstreamWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe("environment", () => {
  it("gives server-everything only env and passEnv: no host secret, no HOME or PATH", async () => {
    const everything = registryServer("server-everything");
    const tools = await declareTools([everything, "stdio"], { "get-env": { name: "get-env", effect: "read" } });
    world = await startUpstreamWorld({
      plugin: {
        upstream: { command: process.execPath, args: [everything, "stdio"], env: { GREETING: "hi" }, passEnv: ["UPSTREAM_VISIBLE", "NOT_SET_ANYWHERE"] },
        tools,
      },
      env: { UPSTREAM_VISIBLE: "yes", HOST_ONLY_SECRET: "s3cret" },
    });
    const result = (await world.execute("get-env", {})) as { text: string };
    const seen = JSON.parse(result.text) as Record<string, string>;
    expect(seen).toEqual({ GREETING: "hi", UPSTREAM_VISIBLE: "yes" });
  }, 60_000);

  it("refuses to start a host whose upstream asks for one of toolpact's own secrets", async () => {
    const error = await startUpstreamWorld({
      plugin: {
        upstream: { command: process.execPath, args: [V2_SERVER], passEnv: ["TOOLPACT_ADMIN_KEY"] },
        tools: [{ name: "hold", effect: "read", inputSchema: { type: "object" } }],
      },
    }).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe(
      `plugin "${UPSTREAM_ID}": upstream "passEnv" names TOOLPACT_ADMIN_KEY, one of toolpact's own secrets: no plugin may see it; remove it`,
    );
  });
});
