/**
 * Providers whose tools carry the names the MCP conformance suite calls (`test_simple_text`,
 * `test_error_handling`, `json_schema_2020_12_tool`): MCP names are `<provider id>_<tool>` (`.` as `-` in the
 * id, `_` for `-` in the tool), so the ids are one segment each.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ToolpactRuntime } from "../../../packages/runtime/src/index.js";
import { manifest } from "../../integration/support/plugins.js";
import { startCredentialsProxy, type CredentialsProxy } from "./credentials-proxy.js";
import { PLATFORM_POLICY, startMcpWorld, type McpWorld } from "./mcp-world.js";

/** Its tools are named `test_*` over MCP. */
export const CONFORMANCE_TEST_ID = "test";
/** Its tool is named `json_schema_2020_12_tool` over MCP. */
export const CONFORMANCE_JSON_ID = "json";

/** The text `test_simple_text` answers, as the suite describes it. */
export const SIMPLE_TEXT = "This is a simple text response for testing.";

const noInput = { type: "object", properties: {}, additionalProperties: false };

/** Registers both providers and their handlers (install them for a tenant afterwards). */
export function registerConformancePlugins(runtime: ToolpactRuntime): void {
  runtime.registerPlugin(
    manifest({
      id: CONFORMANCE_TEST_ID,
      version: "1.0.0",
      permissions: ["tools:provide"],
      tools: [
        { name: "simple-text", effect: "read", description: "Answers a fixed text.", inputSchema: noInput },
        { name: "error-handling", effect: "read", description: "Always fails.", inputSchema: noInput },
      ],
    }),
  );
  runtime.registerPlugin(
    manifest({
      id: CONFORMANCE_JSON_ID,
      version: "1.0.0",
      permissions: ["tools:provide"],
      tools: [
        {
          name: "schema-2020-12-tool",
          effect: "read",
          description: "Tool with JSON Schema 2020-12 features",
          inputSchema: {
            $schema: "https://json-schema.org/draft/2020-12/schema",
            type: "object",
            // The runner 0.2's schema: composition, conditional and reference keywords must reach tools/list as declared.
            $defs: { address: { $anchor: "addressDef", type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
            properties: {
              name: { type: "string" },
              address: { $ref: "#/$defs/address" },
              contactMethod: { type: "string", enum: ["phone", "email"] },
              phone: { type: "string" },
              email: { type: "string" },
            },
            allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
            if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
            // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keyword, not a promise
            then: { required: ["phone"] },
            else: { required: ["email"] },
            additionalProperties: false,
          },
        },
      ],
    }),
  );
  const tests = runtime.sdkFor(CONFORMANCE_TEST_ID).tools;
  tests.provide("simple-text", { execute: () => SIMPLE_TEXT });
  tests.provide("error-handling", {
    execute: () => {
      throw new Error("This tool intentionally returns an error for testing");
    },
  });
  runtime.sdkFor(CONFORMANCE_JSON_ID).tools.provide("schema-2020-12-tool", { execute: (input) => ({ received: input }) });
}

/** A world whose tenant t1 has both conformance providers installed and allowed, behind a proxy that adds the credentials the runner does not send. */
export interface ConformanceTarget {
  readonly world: McpWorld;
  readonly proxy: CredentialsProxy;
  /** A folder for the runner's results, removed by `close`. */
  readonly results: string;
  close(): Promise<void>;
}

/** Starts a `ConformanceTarget`; `resultsPrefix` names its temporary results folder. */
export async function startConformanceTarget(resultsPrefix: string): Promise<ConformanceTarget> {
  const world = await startMcpWorld({ setup: registerConformancePlugins });
  const ids = [CONFORMANCE_TEST_ID, CONFORMANCE_JSON_ID];
  for (const pluginId of ids) await world.stack.admin("installPlugin", { tenantId: "t1", pluginId });
  await world.stack.admin("setPolicy", {
    tenantId: "t1",
    policy: { rules: [...PLATFORM_POLICY.rules, ...ids.map((id) => ({ tools: `${id}:*`, effects: ["read" as const], decision: "allow" as const }))] },
  });
  const proxy = await startCredentialsProxy(world.stack.url, () => world.headers());
  const results = mkdtempSync(path.join(tmpdir(), resultsPrefix));
  return {
    world,
    proxy,
    results,
    close: async () => {
      await proxy.close();
      await world.close();
      rmSync(results, { recursive: true, force: true });
    },
  };
}
