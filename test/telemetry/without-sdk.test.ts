/**
 * With `@opentelemetry/api` installed but no SDK registered (this file registers none), the runtime does no
 * telemetry work: calls answer as before, and a caller's valid `traceparent` reaches the provider's `ctx`
 * unchanged (toolpact is then a transparent hop in the caller's trace); a malformed one reaches nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { trace } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ASSISTANT_ID, PROVIDER_ID } from "../integration/support/plugins.js";
import { configureWorld, makeSecrets, startStack, type Stack, type WorldKeys } from "../integration/support/stack.js";
import { mintActorToken } from "../integration/support/tokens.js";
import { callerHeaders, mutate, ok } from "../integration/support/wire.js";
import { callerTraceparent } from "./support/otel.js";

const secrets = makeSecrets();
let dir: string;
let stack: Stack;
let keys: WorldKeys;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-no-otel-"));
  stack = await startStack({ dbFile: path.join(dir, "toolpact.db"), secrets });
  keys = await configureWorld(stack);
});

afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function echo(headers: Record<string, string>) {
  const actor = await mintActorToken(secrets.actorSecret, { sub: "user-untraced" });
  return ok(
    await mutate(
      stack.url,
      "tools.execute",
      { ref: { providerId: PROVIDER_ID, tool: "echo" }, input: { n: 1 } },
      { ...callerHeaders(keys.t1[ASSISTANT_ID]!.key, actor), ...headers },
    ),
  );
}

describe("no OpenTelemetry SDK registered", () => {
  it("makes no span: the global tracer is the API's no-op one", () => {
    expect(trace.getTracer("probe").startSpan("probe").isRecording()).toBe(false);
  });

  it("passes a caller's traceparent and tracestate through to the provider's ctx as they came", async () => {
    const caller = callerTraceparent();
    await echo({ traceparent: caller.traceparent, tracestate: "vendor=opaque" });
    expect(stack.probe.lastContext?.traceparent).toBe(caller.traceparent);
    expect(stack.probe.lastContext?.tracestate).toBe("vendor=opaque");
  });

  it("passes nothing for a malformed traceparent, nor a tracestate without one", async () => {
    for (const traceparent of [
      "00-xyz",
      `00-${"A".repeat(32)}-${"1".repeat(16)}-01`,
      `ff-${"a".repeat(32)}-${"1".repeat(16)}-01`,
      `00-${"a".repeat(32)}-${"1".repeat(16)}-01-extra`,
    ]) {
      await echo({ traceparent, tracestate: "vendor=opaque" });
      expect(stack.probe.lastContext?.traceparent).toBeUndefined();
      expect(stack.probe.lastContext?.tracestate).toBeUndefined();
    }
    await echo({});
    expect(stack.probe.lastContext).not.toHaveProperty("traceparent");
  });
});
