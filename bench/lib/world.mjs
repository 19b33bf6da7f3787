// The toolpact side of the in-process benchmarks: a runtime on a real store (SQLite file, or PostgreSQL)
// with the same plugins, tenant and policy as the `toolpact serve` processes.
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { loadManifestOrThrow } from "@toolpact/contract";
import * as runtimePackage from "@toolpact/runtime";
import { scratchDir } from "./scratch.mjs";
import { ACTOR_ISSUER, PLUGIN_DIRS, PROVIDER_ID, RATE_LIMITS, mintActorToken, setUpTenant } from "./tenant.mjs";

/** True once `@toolpact/runtime` exports `createStore` (PostgreSQL support). */
export const hasPostgresStore = typeof runtimePackage.createStore === "function";

/**
 * Creates the runtime on a fresh SQLite file, or on `database` (a `postgres://` URL) through `createStore`.
 * Answers the runtime, the caller's credentials, the SQLite file (if any) and `close()`.
 */
/**
 * `checkpointEveryMs`: the runtime's activity checkpoint job runs this often over events of any age (the
 * audit rows); without it the job is off, so the other rows measure calls alone.
 * `auditWorker: false` runs those checkpoints on the calls' thread (default: the runtime's worker thread).
 * `policy`: the tenant's policy (default the benchmarks' POLICY). `sqliteOptions`: more options of `createSqliteStore`.
 * @param {{ database?: string | undefined, checkpointEveryMs?: number | undefined, auditWorker?: boolean, policy?: import("@toolpact/runtime").TenantPolicy, sqliteOptions?: object }} [options]
 */
export async function createWorld({ database, checkpointEveryMs, auditWorker, policy, sqliteOptions } = {}) {
  const dir = await scratchDir("toolpact-world-");
  const sqliteFile = database === undefined ? path.join(dir, "toolpact.db") : undefined;
  let store;
  if (sqliteFile !== undefined) store = await runtimePackage.createSqliteStore({ ...sqliteOptions, path: sqliteFile });
  else if (hasPostgresStore && database !== undefined) store = await runtimePackage.createStore(database);
  else throw new Error("@toolpact/runtime does not export createStore yet: no PostgreSQL store to measure");
  const actorSecret = new Uint8Array(randomBytes(32));
  const runtime = await runtimePackage.createRuntime({
    store,
    signingKeys: [{ kid: "bench", key: new Uint8Array(randomBytes(32)) }],
    storageKey: new Uint8Array(randomBytes(32)),
    actorTokens: { issuer: ACTOR_ISSUER, secret: actorSecret },
    rateLimits: RATE_LIMITS,
    audit:
      checkpointEveryMs === undefined
        ? { checkpointIntervalMs: 0 }
        : { checkpointIntervalMs: checkpointEveryMs, settleMs: 0, ...(auditWorker === undefined ? {} : { worker: auditWorker }) },
  });
  for (const dir of PLUGIN_DIRS) {
    const manifest = await loadManifestOrThrow(path.join(dir, "plugin.json"));
    runtime.registerPlugin(manifest);
    const plugin = await import(pathToFileURL(path.join(dir, "index.js")).href);
    await plugin.activate(runtime.sdkFor(manifest.id));
  }
  const pluginKey = await setUpTenant(runtime.admin, policy);
  return {
    runtime,
    store,
    pluginKey,
    actorToken: mintActorToken(actorSecret),
    sqliteFile,
    providerId: PROVIDER_ID,
    async close() {
      await runtime.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
