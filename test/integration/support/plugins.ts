/** The test plugins: one provider with tools for every path of the pipeline, and several callers. */
import { parseManifest, type Manifest } from "../../../packages/contract/src/index.js";

export const PROVIDER_ID = "com.test.notes";
export const ASSISTANT_ID = "com.test.assistant";
export const OTHER_CALLER_ID = "com.test.other";
export const NARROW_CALLER_ID = "com.test.narrow";
export const MUTE_CALLER_ID = "com.test.mute";
export const IDLE_CALLER_ID = "com.test.idle";
/** Registered in the host but never installed for a tenant. */
export const ABSENT_PROVIDER_ID = "com.test.absent";
/** Installed, then disabled. */
export const PAUSED_PROVIDER_ID = "com.test.paused";

const titleInput = {
  type: "object",
  properties: { title: { type: "string", maxLength: 200 }, body: { type: "string" }, nested: { type: "object" } },
  required: ["title"],
  additionalProperties: false,
};

/** The provider's manifest; `variant: "changed-schema"` adds a property to create-note's input schema. */
export function providerManifestJson(variant: "base" | "changed-schema" = "base"): Record<string, unknown> {
  const createInput =
    variant === "base" ? titleInput : { ...titleInput, properties: { ...titleInput.properties, tags: { type: "array", items: { type: "string" } } } };
  return {
    id: PROVIDER_ID,
    version: "1.0.0",
    permissions: ["tools:provide"],
    tools: [
      { name: "create-note", effect: "write", title: "Create note", inputSchema: createInput, outputSchema: { type: "object" } },
      { name: "list-notes", effect: "read", inputSchema: { type: "object", properties: { query: { type: "string" } } } },
      { name: "echo", effect: "read", inputSchema: { type: "object" } },
      { name: "slow-note", effect: "write", timeoutMs: 150, inputSchema: titleInput },
      { name: "slow-read", effect: "read", inputSchema: { type: "object" } },
      { name: "broken", effect: "write", inputSchema: titleInput },
      { name: "versioned", version: 1, effect: "write", inputSchema: titleInput },
      { name: "versioned", version: 2, effect: "write", inputSchema: titleInput },
      { name: "unhandled", effect: "read", inputSchema: { type: "object" } },
      { name: "verified-read", effect: "read", minVerificationLevel: 2, inputSchema: { type: "object" } },
      { name: "deep", effect: "read", inputSchema: { type: "object" } },
    ],
  };
}

/** A small read-only provider (the absent and paused ones). */
export function smallProviderJson(id: string): Record<string, unknown> {
  return {
    id,
    version: "1.0.0",
    permissions: ["tools:provide"],
    tools: [{ name: "ping", effect: "read", inputSchema: { type: "object" } }],
  };
}

/** A calling plugin's manifest. */
export function callerManifestJson(id: string, options: { uses?: string[]; call?: boolean } = {}): Record<string, unknown> {
  return {
    id,
    version: "1.0.0",
    permissions: options.call === false ? [] : ["tools:call"],
    ...(options.uses ? { uses: options.uses } : {}),
  };
}

/** Validates a manifest the way the host does and returns it with defaults applied. */
export function manifest(json: Record<string, unknown>): Manifest {
  const result = parseManifest(JSON.stringify(json), `${String(json.id)}/plugin.json`);
  if (!result.ok) throw new Error(`test manifest invalid: ${JSON.stringify(result.diagnostics)}`);
  return result.manifest;
}

/** Every manifest of the test world. */
export function testManifests(variant: "base" | "changed-schema" = "base"): Manifest[] {
  return [
    manifest(providerManifestJson(variant)),
    manifest(callerManifestJson(ASSISTANT_ID)),
    manifest(callerManifestJson(OTHER_CALLER_ID)),
    manifest(callerManifestJson(NARROW_CALLER_ID, { uses: [`${PROVIDER_ID}:list-notes`] })),
    manifest(callerManifestJson(MUTE_CALLER_ID, { call: false })),
    manifest(callerManifestJson(IDLE_CALLER_ID)),
    manifest(smallProviderJson(ABSENT_PROVIDER_ID)),
    manifest(smallProviderJson(PAUSED_PROVIDER_ID)),
  ];
}
