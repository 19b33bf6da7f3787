// The benchmark's toolpact world: a SQLite-backed runtime with one provider and one caller, configured
// through the runtime's admin API, and an actor token minted like the identity service would (HS256).
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseManifest } from "@toolpact/contract";
import { createRuntime, createSqliteStore } from "@toolpact/runtime";
import { lookupItem } from "./work.mjs";

export const PROVIDER_ID = "bench.items";
export const CALLER_ID = "bench.load-client";
export const TENANT_ID = "bench-tenant";
const ISSUER = "https://id.bench.example";

const providerManifest = {
  id: PROVIDER_ID,
  version: "1.0.0",
  permissions: ["tools:provide"],
  tools: [
    {
      name: "get-item",
      effect: "read",
      inputSchema: { type: "object", properties: { id: { type: "string", minLength: 1, maxLength: 64 } }, required: ["id"], additionalProperties: false },
    },
    {
      name: "put-item",
      effect: "write",
      inputSchema: { type: "object", properties: { id: { type: "string", minLength: 1, maxLength: 64 } }, required: ["id"], additionalProperties: false },
    },
  ],
};
const callerManifest = { id: CALLER_ID, version: "1.0.0", permissions: ["tools:call"] };

function manifest(json) {
  const result = parseManifest(JSON.stringify(json), `${json.id}/plugin.json`);
  if (!result.ok) throw new Error(`bench manifest invalid: ${JSON.stringify(result.diagnostics)}`);
  return result.manifest;
}

/** An HS256 JWT made with node:crypto (the bench has no JWT library of its own). */
function mintActorToken(secret, claims) {
  const encode = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const signingInput = `${encode({ alg: "HS256", typ: "JWT" })}.${encode(claims)}`;
  return `${signingInput}.${createHmac("sha256", secret).update(signingInput).digest("base64url")}`;
}

/** Creates the runtime in a fresh temp dir and configures the tenant; returns what a caller needs. */
export async function createBenchWorld() {
  const dir = mkdtempSync(path.join(tmpdir(), "toolpact-bench-"));
  const actorSecret = new Uint8Array(randomBytes(32));
  const runtime = await createRuntime({
    store: await createSqliteStore({ path: path.join(dir, "toolpact.db") }),
    signingKeys: [{ kid: "bench", key: new Uint8Array(randomBytes(32)) }],
    storageKey: new Uint8Array(randomBytes(32)),
    actorTokens: { issuer: ISSUER, secret: actorSecret },
  });
  runtime.registerPlugin(manifest(providerManifest));
  runtime.registerPlugin(manifest(callerManifest));
  const sdk = runtime.sdkFor(PROVIDER_ID);
  sdk.tools.provide("get-item", { execute: (input) => lookupItem(input.id) });
  sdk.tools.provide("put-item", {
    preview: (input) => ({ summary: `Put item ${input.id}`, details: { id: input.id } }),
    execute: (input) => lookupItem(input.id),
  });
  await runtime.admin.installPlugin(TENANT_ID, PROVIDER_ID);
  await runtime.admin.installPlugin(TENANT_ID, CALLER_ID);
  await runtime.admin.setPolicy(TENANT_ID, {
    rules: [
      { tools: `${PROVIDER_ID}:*`, effects: ["read"], decision: "allow" },
      { tools: `${PROVIDER_ID}:*`, effects: ["write"], decision: "confirm", mode: "token" },
    ],
    trustedConfirmationUis: [CALLER_ID],
  });
  const { key: pluginKey } = await runtime.admin.issuePluginKey(TENANT_ID, CALLER_ID);
  const actorToken = mintActorToken(actorSecret, {
    iss: ISSUER,
    aud: "toolpact",
    sub: "bench-user",
    tid: TENANT_ID,
    lvl: 1,
    exp: Math.floor(Date.now() / 1000) + 3600,
  });
  return { runtime, pluginKey, actorToken, dir };
}
