/**
 * A confirmed write traced by the real OpenTelemetry SDK: one span per call with a child span per step of
 * its chain, the GenAI and MCP attributes, and no input or token anywhere; the trace continuing from an MCP
 * request's `_meta.traceparent` and from an HTTP `traceparent` header into the provider's `ctx`; and the
 * metrics the calls recorded.
 */
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpTransport } from "../../packages/client/src/index.js";
import { isToolpactError } from "../../packages/contract/src/index.js";
import { createRemoteBackend } from "../../packages/mcp/src/remote-backend.js";
import { ASSISTANT_ID, PROVIDER_ID } from "../integration/support/plugins.js";
import { mintActorToken } from "../integration/support/tokens.js";
import { startMcpWorld, userWho, type McpWorld } from "../mcp/support/mcp-world.js";
import { callerTraceparent, childrenOf, printTree, registerOtel, spansOf, type Otel } from "./support/otel.js";

const AUTHORIZATION_STEPS = ["resolve-tool", "check-caller", "validate-input", "decide-permission", "provider-authorize", "apply-gates"];
const EFFECT_STEPS = ["invoke-provider", "validate-output", "apply-guards", "keep-result", "after-tool-hooks"];
/** What the printed tree (TOOLPACT_PRINT_TRACE=1, for docs/observability.md) shows of each span. */
const SHOWN = [
  "gen_ai.operation.name",
  "gen_ai.tool.name",
  "mcp.method.name",
  "jsonrpc.request.id",
  "toolpact.provider",
  "toolpact.caller",
  "toolpact.tenant",
  "toolpact.via",
  "toolpact.phase",
  "toolpact.effect",
  "toolpact.tool.version",
  "toolpact.confirmation.mode",
  "toolpact.operation.id",
  "toolpact.outcome",
  "toolpact.refusal.code",
  "error.type",
];

let otel: Otel;
let world: McpWorld;

beforeAll(async () => {
  otel = registerOtel();
  world = await startMcpWorld();
});

afterAll(async () => {
  await world?.close();
  await otel?.shutdown();
});

const names = (spans: readonly ReadableSpan[]) => spans.map((span) => span.name);
const traceparentOf = (span: ReadableSpan) => `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`;

describe("a confirmed write over MCP, traced", () => {
  const caller = callerTraceparent();
  const marker = `note-${crypto.randomUUID()}`;
  let spans: ReadableSpan[];
  let preview: ReadableSpan;
  let execute: ReadableSpan;

  beforeAll(async () => {
    const decided: string[] = [];
    const client = await world.connect({ onUrlElicitation: userWho(world, "approve", decided) });
    const result = await client.callTool({ name: "com-test-notes_create_note", arguments: { title: marker }, _meta: { traceparent: caller.traceparent } });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(decided).toHaveLength(1);
    spans = spansOf(otel.exporter, caller.traceId);
    const roots = spans.filter((span) => span.parentSpanContext?.spanId === caller.spanId);
    expect(names(roots)).toEqual(["preview_tool com.test.notes:create-note", "execute_tool com.test.notes:create-note"]);
    [preview, execute] = roots as [ReadableSpan, ReadableSpan];
    if (process.env.TOOLPACT_PRINT_TRACE === "1") console.log(`${printTree(spans, preview, SHOWN)}\n${printTree(spans, execute, SHOWN)}`);
  });

  it("makes one span per call, continuing the MCP request's _meta.traceparent", () => {
    for (const root of [preview, execute]) {
      expect(root.parentSpanContext).toMatchObject({ traceId: caller.traceId, spanId: caller.spanId, isRemote: true });
      expect(root.attributes).toMatchObject({
        "gen_ai.tool.name": "com.test.notes:create-note",
        "mcp.method.name": "tools/call",
        "toolpact.provider": PROVIDER_ID,
        "toolpact.caller": ASSISTANT_ID,
        "toolpact.tenant": "t1",
        "toolpact.via": "mcp",
        "toolpact.effect": "write",
        "toolpact.tool.version": 1,
        "toolpact.confirmation.mode": "platform",
      });
      expect(typeof root.attributes["jsonrpc.request.id"]).toBe("string");
    }
    expect(preview.attributes).toMatchObject({ "toolpact.phase": "preview", "toolpact.outcome": "previewed" });
    expect(preview.attributes["gen_ai.operation.name"]).toBeUndefined();
    expect(execute.attributes).toMatchObject({ "gen_ai.operation.name": "execute_tool", "toolpact.phase": "execute", "toolpact.outcome": "succeeded" });
    expect(execute.attributes["toolpact.operation.id"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("gives every step of the chain a child span, named as the step", () => {
    const previewSteps = childrenOf(spans, preview);
    expect(names(previewSteps)).toEqual(["limit-previews", ...AUTHORIZATION_STEPS, "request-confirmation"]);
    // request-confirmation works around the summary: it asks for the confirmation once the summary is made.
    expect(names(childrenOf(spans, previewSteps.at(-1) as ReadableSpan))).toEqual(["preview-summary"]);
    const steps = childrenOf(spans, execute);
    expect(names(steps)).toEqual([...AUTHORIZATION_STEPS, "replay-idempotent", "verify-confirmation", "ledger"]);
    const ledger = steps.at(-1) as ReadableSpan;
    expect(names(childrenOf(spans, ledger))).toEqual(EFFECT_STEPS);
    expect(spans.every((span) => span.status.code !== 2)).toBe(true);
  });

  it("hands the provider the traceparent of the span it runs in", () => {
    const invoke = spans.find((span) => span.name === "invoke-provider") as ReadableSpan;
    expect(world.stack.probe.lastContext?.traceparent).toBe(traceparentOf(invoke));
    const summary = spans.find((span) => span.name === "preview-summary") as ReadableSpan;
    expect(world.stack.probe.lastPreviewContext?.traceparent).toBe(traceparentOf(summary));
  });

  it("puts no input, no token and no key in any attribute of any span or metric", async () => {
    const headers = await world.headers();
    const recorded = await otel.everything();
    expect(recorded).toContain("create-note");
    for (const secret of [marker, headers.authorization!.slice("Bearer ".length), headers["x-toolpact-actor"]!, world.secrets.adminKey]) {
      expect(recorded).not.toContain(secret);
    }
    expect(recorded).not.toMatch(/eyJ[\w-]{10,}\./);
  });

  it("records the calls, their latency, the confirmation's wait and the store's commits", async () => {
    const calls = await otel.points("toolpact.calls");
    const of = (attributes: Record<string, unknown>) => calls.filter((point) => Object.entries(attributes).every(([k, v]) => point.attributes[k] === v));
    expect(
      of({ "gen_ai.tool.name": "com.test.notes:create-note", "toolpact.phase": "execute", "toolpact.outcome": "succeeded", "toolpact.effect": "write" })[0]
        ?.value,
    ).toBe(1);
    expect(of({ "gen_ai.tool.name": "com.test.notes:create-note", "toolpact.phase": "preview", "toolpact.outcome": "previewed" })[0]?.value).toBe(1);
    const durations = await otel.points("toolpact.call.duration");
    expect(durations.map((point) => (point.value as { count: number }).count).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(2);
    const waits = await otel.points("toolpact.confirmation.wait.duration");
    expect(waits.find((point) => point.attributes["toolpact.confirmation.decision"] === "approved")?.value).toMatchObject({ count: 1 });
    const commits = await otel.points("toolpact.store.commit.duration");
    const committed = new Set(commits.map((point) => point.attributes["toolpact.store.operation"]));
    for (const operation of ["begin", "settle", "confirmation", "decision"]) expect(committed).toContain(operation);
  });
});

describe("a call over HTTP, traced", () => {
  const transport = async (traceparent?: string) => {
    const actorToken = await mintActorToken(world.secrets.actorSecret, { sub: "user-http" });
    const pluginKey = world.keys.t1[ASSISTANT_ID]!.key;
    return createHttpTransport({
      url: world.stack.url,
      pluginKey,
      actorToken,
      fetch: (url, init) => {
        const headers = new Headers(init?.headers);
        if (traceparent !== undefined) {
          headers.set("traceparent", traceparent);
          headers.set("tracestate", "vendor=opaque");
        }
        return fetch(url, { ...init, headers });
      },
    });
  };

  it("continues the traceparent header into the call and on into the provider's ctx", async () => {
    const caller = callerTraceparent();
    await (await transport(caller.traceparent)).execute({ providerId: PROVIDER_ID, tool: "echo" }, { n: 1 });
    const spans = spansOf(otel.exporter, caller.traceId);
    const call = spans.find((span) => span.name === "execute_tool com.test.notes:echo") as ReadableSpan;
    expect(call.parentSpanContext).toMatchObject({ spanId: caller.spanId, isRemote: true });
    expect(call.attributes).toMatchObject({ "toolpact.via": "http", "toolpact.effect": "read", "toolpact.outcome": "succeeded" });
    expect(call.attributes["mcp.method.name"]).toBeUndefined();
    const steps = childrenOf(spans, call);
    expect(names(steps)).toEqual([...AUTHORIZATION_STEPS, "replay-idempotent", "verify-confirmation", "record-read"]);
    const invoke = childrenOf(spans, steps.at(-1) as ReadableSpan)[0] as ReadableSpan;
    expect(invoke.name).toBe("invoke-provider");
    expect(world.stack.probe.lastContext?.traceparent).toBe(traceparentOf(invoke));
    expect(world.stack.probe.lastContext?.tracestate).toBe("vendor=opaque");
  });

  it("drops a malformed traceparent: the call starts a trace of its own", async () => {
    const before = new Set(otel.exporter.getFinishedSpans().map((span) => span.spanContext().traceId));
    const bad = `00-${"0".repeat(32)}-${"1".repeat(16)}-01`;
    await (await transport(bad)).execute({ providerId: PROVIDER_ID, tool: "echo" }, { n: 2 });
    const call = otel.exporter.getFinishedSpans().find((span) => span.name === "execute_tool com.test.notes:echo" && !before.has(span.spanContext().traceId));
    expect(call?.parentSpanContext).toBeUndefined();
    expect(world.stack.probe.lastContext?.traceparent).not.toContain("0".repeat(32));
  });

  it("marks a refusal on the call's span and counts it by code", async () => {
    const caller = callerTraceparent();
    const refused = await (await transport(caller.traceparent)).execute({ providerId: PROVIDER_ID, tool: "create-note" }, { title: "no approval" }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isToolpactError(refused) && refused.code).toBe("CONFIRMATION_REQUIRED");
    const spans = spansOf(otel.exporter, caller.traceId);
    const call = spans.find((span) => span.name === "execute_tool com.test.notes:create-note") as ReadableSpan;
    expect(call.status).toEqual({ code: 2, message: "CONFIRMATION_REQUIRED" });
    expect(call.attributes).toMatchObject({
      "toolpact.refusal.code": "CONFIRMATION_REQUIRED",
      "error.type": "CONFIRMATION_REQUIRED",
      "toolpact.outcome": "denied",
    });
    const failing = spans.find((span) => span.status.code === 2 && span !== call) as ReadableSpan;
    expect(failing.name).toBe("verify-confirmation");
    const refusals = await otel.points("toolpact.refusals");
    const counted = refusals.find(
      (point) => point.attributes["toolpact.refusal.code"] === "CONFIRMATION_REQUIRED" && point.attributes["gen_ai.tool.name"] === "com.test.notes:create-note",
    );
    expect(counted?.value).toBe(1);
    expect(counted?.attributes["toolpact.effect"]).toBe("write");
  });

  it("carries an MCP request's trace through `toolpact mcp --url` (the remote backend) as the traceparent header", async () => {
    const caller = callerTraceparent();
    const actorToken = await mintActorToken(world.secrets.actorSecret, { sub: "user-remote" });
    const backend = createRemoteBackend({ url: world.stack.url, keys: () => ({ pluginKey: world.keys.t1[ASSISTANT_ID]!.key, actorToken }) });
    await backend.withTrace?.({ traceparent: caller.traceparent }).execute({ providerId: PROVIDER_ID, tool: "echo" }, { n: 3 });
    const call = spansOf(otel.exporter, caller.traceId).find((span) => span.name === "execute_tool com.test.notes:echo");
    expect(call?.parentSpanContext?.spanId).toBe(caller.spanId);
    expect(call?.attributes["toolpact.via"]).toBe("mcp");
  });

  it("names no tool a caller made up, on spans or metrics", async () => {
    const junk = `Not A Tool ${crypto.randomUUID()}`;
    await (await transport()).execute({ providerId: PROVIDER_ID, tool: junk }, {}).catch(() => undefined);
    expect(await otel.everything()).not.toContain(junk);
  });
});
