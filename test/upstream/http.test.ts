/**
 * An upstream over Streamable HTTP: the bearer token comes from a file only its owner can read, the newest
 * revision both sides know is spoken (2026-07-28 with a v2 SDK server, 2025-11-25 when pinned), and the
 * call's trace context travels in the request's `_meta`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startUpstreamWorld, UPSTREAM_ID, V2_SERVER, type UpstreamWorld } from "./support/upstream-host.js";

const TOKEN = "upstream-token-0123456789abcdef";
let server: ChildProcess;
let url: string;
let world: UpstreamWorld | undefined;

beforeAll(async () => {
  server = spawn(process.execPath, [V2_SERVER, "http"], { env: { TOKEN }, stdio: ["ignore", "pipe", "ignore"] });
  const lines = createInterface({ input: server.stdout! });
  const port = await new Promise<string>((resolve) => lines.once("line", (line) => resolve(line.replace("listening ", ""))));
  url = `http://127.0.0.1:${port}/mcp`;
});

afterAll(() => {
  server?.kill();
});

afterEach(async () => {
  await world?.close();
  world = undefined;
});

const trace = { name: "trace", effect: "read", upstreamName: "trace", inputSchema: { type: "object" } };

describe("Streamable HTTP upstream", () => {
  it("sends the token from the token file, speaks 2026-07-28, and passes the trace context in _meta", async () => {
    world = await startUpstreamWorld({ plugin: { upstream: { url, tokenFile: "token" }, tools: [trace] }, files: { token: `${TOKEN}\n` } });
    expect(await world.logged((entry) => entry.event === "upstream_connected")).toMatchObject({ protocolVersion: "2026-07-28", server: "toolpact-fixture" });
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const traced = { ...world.principal, traceContext: { traceparent } };
    const result = await world.runtime.execute(traced, { providerId: UPSTREAM_ID, tool: "trace" }, {});
    expect(JSON.parse((result.result as { text: string }).text)).toMatchObject({ traceparent });
  }, 60_000);

  it("speaks 2025-11-25 to the same server when pinned to it", async () => {
    world = await startUpstreamWorld({
      plugin: { upstream: { url, tokenFile: "token" }, tools: [trace] },
      files: { token: TOKEN },
      supervision: { revision: "2025-11-25" },
    });
    expect(await world.logged((entry) => entry.event === "upstream_connected")).toMatchObject({ protocolVersion: "2025-11-25" });
    expect(await world.execute("trace", {})).toMatchObject({ content: [{ type: "text" }] });
  }, 60_000);

  it("does not connect with a token the server refuses, and its tools answer that nothing was sent", async () => {
    world = await startUpstreamWorld({ plugin: { upstream: { url, tokenFile: "token" }, tools: [trace] }, files: { token: "wrong-token" } });
    expect(await world.logged((entry) => entry.event === "upstream_start_failed")).toMatchObject({ pluginId: UPSTREAM_ID });
    expect(await world.execute("trace", {}).catch((error: unknown) => error)).toMatchObject({
      code: "PROVIDER_FAILED",
      data: { errorClass: "UpstreamUnavailable" },
    });
  }, 60_000);

  it("refuses a token file that its group or others can read, naming the file and the fix", async () => {
    const error = await startUpstreamWorld({
      plugin: { upstream: { url, tokenFile: "token" }, tools: [trace] },
      files: { token: TOKEN },
      beforeStart: (dir) => chmodSync(path.join(dir, "token"), 0o640),
    }).catch((caught: unknown) => caught);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^plugin "${UPSTREAM_ID}": upstream "tokenFile": .*/upstream/token holds the bearer token of its upstream but its group may read or change it \\(mode 0640\\): run chmod 600 .*/upstream/token$`,
      ),
    );
  });
});
