// The tenant every toolpact side of the benchmarks runs: one provider, one caller, a policy that allows the
// read tool and asks token-mode confirmation for the write tool (the caller is a trusted confirmation UI).
import { createHmac } from "node:crypto";
import { fileURLToPath } from "node:url";

export const PROVIDER_ID = "bench.items";
export const CALLER_ID = "bench.load-client";
export const TENANT_ID = "bench-tenant";
export const ACTOR_ISSUER = "https://id.bench.example";
export const READ_REF = Object.freeze({ providerId: PROVIDER_ID, tool: "get-item" });
export const WRITE_REF = Object.freeze({ providerId: PROVIDER_ID, tool: "put-item" });
/** A write that declares no confirmation: what the policy alone decides. */
export const UNCONFIRMED_WRITE_REF = Object.freeze({ providerId: PROVIDER_ID, tool: "touch-item" });

/** The plugin folders `toolpact serve` loads. */
export const PLUGIN_DIRS = [PROVIDER_ID, CALLER_ID].map((id) => fileURLToPath(new URL(`../plugins/${id.slice("bench.".length)}/`, import.meta.url)));

export const POLICY = Object.freeze(
  /** @type {import("@toolpact/runtime").TenantPolicy} */ ({
    rules: [
      { tools: `${PROVIDER_ID}:*`, effects: ["read"], decision: "allow" },
      { tools: `${PROVIDER_ID}:*`, effects: ["write"], decision: "confirm", mode: "token" },
    ],
    trustedConfirmationUis: [CALLER_ID],
  }),
);

/**
 * The same tenant with the confirmed write open to grants (any number of calls for a day, confirmed on the
 * platform): what the user's grant in the grant rows covers. Reads and the unconfirmed write are allowed.
 */
export const GRANTING_POLICY = Object.freeze(
  /** @type {import("@toolpact/runtime").TenantPolicy} */ ({
    rules: [
      { tools: `${PROVIDER_ID}:*`, effects: ["read"], decision: "allow" },
      { tools: `${PROVIDER_ID}:${UNCONFIRMED_WRITE_REF.tool}`, decision: "allow" },
      { tools: `${PROVIDER_ID}:${WRITE_REF.tool}`, decision: "confirm", mode: "platform", grants: { maxSeconds: 86_400 } },
    ],
  }),
);

/** Preview rate limit high enough that the confirmed-write loops never meet it. */
export const RATE_LIMITS = Object.freeze({ previewsPerMinute: 1_000_000, pendingConfirmations: 100_000 });

/** An actor token as the identity service would mint it: HS256 JWT made with node:crypto. */
export function mintActorToken(secret) {
  const claims = {
    iss: ACTOR_ISSUER,
    aud: "toolpact",
    sub: "bench-user",
    tid: TENANT_ID,
    lvl: 1,
    exp: Math.floor(Date.now() / 1000) + 3600,
  };
  const encode = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const signingInput = `${encode({ alg: "HS256", typ: "JWT" })}.${encode(claims)}`;
  return `${signingInput}.${createHmac("sha256", secret).update(signingInput).digest("base64url")}`;
}

/**
 * Installs both plugins, sets the policy and issues the caller's key through `admin` (runtime.admin or the HTTP admin API).
 * @param {{ installPlugin: Function, setPolicy: Function, issuePluginKey: Function }} admin
 * @param {import("@toolpact/runtime").TenantPolicy} [policy]
 */
export async function setUpTenant(admin, policy = POLICY) {
  await admin.installPlugin(TENANT_ID, PROVIDER_ID);
  await admin.installPlugin(TENANT_ID, CALLER_ID);
  await admin.setPolicy(TENANT_ID, policy);
  const { key } = await admin.issuePluginKey(TENANT_ID, CALLER_ID);
  return key;
}
