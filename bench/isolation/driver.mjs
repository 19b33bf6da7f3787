// The isolation benchmark's in-process worker: two hosts (startHost, SQLite ledger) in this process, one
// loading bench.items in its own process and one loading the same module with "isolation": "process";
// each call is a read execute through the runtime's whole pipeline, without HTTP.
import { randomBytes } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { loadHostConfig, startHost } from "@toolpact/server";
import { serveDriver } from "../lib/driver.mjs";
import { scratchDir } from "../lib/scratch.mjs";
import { ACTOR_ISSUER, PLUGIN_DIRS, PROVIDER_ID, RATE_LIMITS, READ_REF, mintActorToken, setUpTenant } from "../lib/tenant.mjs";
import { checkItem, inputOf } from "../lib/work.mjs";
import { writeIsolatedItems } from "./items-isolated.mjs";

const [ITEMS_DIR, CALLER_DIR] = PLUGIN_DIRS;

async function startItemsHost({ isolated }) {
  const dir = await scratchDir("toolpact-isolation-");
  const itemsDir = isolated ? await writeIsolatedItems(dir) : ITEMS_DIR;
  await writeFile(
    path.join(dir, "toolpact.config.json"),
    JSON.stringify({
      plugins: [itemsDir, CALLER_DIR],
      database: path.join(dir, "toolpact.db"),
      host: "127.0.0.1",
      port: 0,
      publicUrl: "http://127.0.0.1:4400",
      actorIssuer: ACTOR_ISSUER,
      limits: { rateLimits: RATE_LIMITS },
    }),
  );
  const actorSecret = randomBytes(32);
  const env = {
    TOOLPACT_ADMIN_KEY: randomBytes(32).toString("base64url"),
    TOOLPACT_ACTOR_SECRET: actorSecret.toString("base64"),
    TOOLPACT_SIGNING_KEYS: `bench:${randomBytes(32).toString("base64")}`,
    TOOLPACT_STORAGE_KEY: randomBytes(32).toString("base64"),
  };
  const host = await startHost({ config: await loadHostConfig({ cwd: dir, env: {} }), env });
  const pluginKey = await setUpTenant(host.runtime.admin);
  const principal = await host.runtime.authenticate({ pluginKey, actorToken: mintActorToken(actorSecret), via: "http" });
  return {
    info: { sqliteFile: path.join(dir, "toolpact.db") },
    call: async (i) => {
      const input = inputOf(i);
      checkItem((await host.runtime.execute(principal, READ_REF, input)).result, input.id, isolated ? "isolated" : "in process");
    },
    close: async () => {
      await host.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

if (PROVIDER_ID !== "bench.items") throw new Error(`the isolation bench expects bench.items, not ${PROVIDER_ID}`);
serveDriver((spec) => startItemsHost({ isolated: spec.kind === "isolated" }));
