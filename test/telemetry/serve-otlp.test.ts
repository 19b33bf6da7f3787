/**
 * `toolpact serve` with the standard OTEL_* variables and @opentelemetry/sdk-node installed beside it
 * exports its spans and metrics over OTLP/HTTP (JSON) to a collector (a local receiver here), continuing the
 * caller's traceparent, and flushes them when it stops; without OTEL_* it starts no SDK.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { telemetryAsked } from "../../packages/cli/src/otel-sdk.js";
import { killHard, requireBuiltCli, startServe, writePluginFolder, type ServeProcess } from "../integration/support/serve-process.js";
import { ACTOR_ISSUER, mintActorToken } from "../integration/support/tokens.js";
import { callerHeaders, mutate, ok } from "../integration/support/wire.js";
import { startOtlpReceiver, type OtlpReceiver } from "./support/otlp-receiver.js";
import { callerTraceparent } from "./support/otel.js";

requireBuiltCli();

const PROVIDER = "com.test.traced";
const CALLER = "com.test.traced-caller";

let dir: string;
let receiver: OtlpReceiver;
const running: ServeProcess[] = [];

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-otlp-"));
  receiver = await startOtlpReceiver();
});

afterEach(async () => {
  for (const serve of running.splice(0)) await killHard(serve);
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

function writePlugins(): void {
  const lookup = { name: "lookup", effect: "read", inputSchema: { type: "object" } };
  // The provider answers with the traceparent its ctx carried, as it would send it on.
  writePluginFolder(
    dir,
    "traced",
    { id: PROVIDER, version: "1.0.0", permissions: ["tools:provide"], tools: [lookup] },
    `export function activate(sdk) { sdk.tools.provide("lookup", { execute: (input, ctx) => ({ traceparent: ctx.traceparent ?? null }) }); }\n`,
  );
  writePluginFolder(dir, "caller", { id: CALLER, version: "1.0.0", permissions: ["tools:call"] }, "export function activate() {}\n");
  writeFileSync(
    path.join(dir, "toolpact.config.json"),
    JSON.stringify({ plugins: ["./plugins/traced", "./plugins/caller"], database: "./data/toolpact.db", port: 0, actorIssuer: ACTOR_ISSUER }),
  );
}

interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
}

/** Every span the receiver got, with the service name of its resource. */
function exportedSpans(): { service: unknown; span: OtlpSpan }[] {
  return receiver.received
    .filter((export_) => export_.path === "/v1/traces")
    .flatMap((export_) => {
      const body = JSON.parse(export_.body) as {
        resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
      };
      return body.resourceSpans.flatMap((resource) => {
        const service = resource.resource.attributes.find((attribute) => attribute.key === "service.name")?.value.stringValue;
        return resource.scopeSpans.flatMap((scope) => scope.spans.map((span) => ({ service, span })));
      });
    });
}

describe("toolpact serve with OTEL_* set", () => {
  it("exports the call's spans over OTLP/HTTP, continuing the caller's traceparent, and flushes them at shutdown", async () => {
    writePlugins();
    const actorSecret = randomBytes(32);
    const adminKey = randomBytes(32).toString("base64url");
    const env = {
      TOOLPACT_ADMIN_KEY: adminKey,
      TOOLPACT_ACTOR_SECRET: actorSecret.toString("base64"),
      TOOLPACT_SIGNING_KEYS: `k1:${randomBytes(32).toString("base64")}`,
      TOOLPACT_STORAGE_KEY: randomBytes(32).toString("base64"),
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_METRICS_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "toolpact-under-test",
    };
    const serve = await startServe({ cwd: dir, args: [], env });
    running.push(serve);
    const admin = { authorization: `Bearer ${adminKey}` };
    for (const pluginId of [PROVIDER, CALLER]) ok(await mutate(serve.url, "admin.installPlugin", { tenantId: "t1", pluginId }, admin));
    ok(await mutate(serve.url, "admin.setPolicy", { tenantId: "t1", policy: { rules: [{ tools: `${PROVIDER}:*`, decision: "allow" }] } }, admin));
    const { key } = ok<{ key: string }>(await mutate(serve.url, "admin.issuePluginKey", { tenantId: "t1", pluginId: CALLER }, admin));
    const actor = await mintActorToken(actorSecret, { tid: "t1" });
    const caller = callerTraceparent();
    const answer = ok<{ result: { traceparent: string | null } }>(
      await mutate(
        serve.url,
        "tools.execute",
        { ref: { providerId: PROVIDER, tool: "lookup" }, input: {} },
        { ...callerHeaders(key, actor), traceparent: caller.traceparent },
      ),
    );
    expect(answer.result.traceparent).toMatch(new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-01$`));

    serve.child.kill("SIGTERM");
    expect((await serve.exited).code).toBe(0);

    const spans = exportedSpans().filter(({ span }) => span.traceId === caller.traceId);
    const call = spans.find(({ span }) => span.name === `execute_tool ${PROVIDER}:lookup`);
    expect(call?.service).toBe("toolpact-under-test");
    expect(call?.span.parentSpanId).toBe(caller.spanId);
    const children = spans.filter(({ span }) => span.parentSpanId === call?.span.spanId).map(({ span }) => span.name);
    expect(children).toEqual(expect.arrayContaining(["resolve-tool", "check-caller", "validate-input", "decide-permission", "record-read"]));
    const invoke = spans.find(({ span }) => span.name === "invoke-provider");
    expect(answer.result.traceparent).toBe(`00-${caller.traceId}-${invoke?.span.spanId}-01`);
    const metrics = receiver.received.filter((export_) => export_.path === "/v1/metrics").map((export_) => export_.body);
    expect(metrics.join("\n")).toContain("toolpact.calls");
    expect(receiver.received.every((export_) => export_.contentType?.startsWith("application/json"))).toBe(true);
  });
});

describe("when the SDK starts", () => {
  it("only when OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER names an exporter, and the SDK is not disabled", () => {
    expect(telemetryAsked({})).toBe(false);
    expect(telemetryAsked({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toBe(false);
    expect(telemetryAsked({ OTEL_TRACES_EXPORTER: "none" })).toBe(false);
    expect(telemetryAsked({ OTEL_TRACES_EXPORTER: "otlp" })).toBe(true);
    expect(telemetryAsked({ OTEL_METRICS_EXPORTER: " none, otlp" })).toBe(true);
    expect(telemetryAsked({ OTEL_TRACES_EXPORTER: "otlp", OTEL_SDK_DISABLED: "true" })).toBe(false);
  });
});
