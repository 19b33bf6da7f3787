// The isolation benchmark's in-process worker: two hosts (startHost, SQLite ledger) in this process, one
// loading bench.items in its own process and one loading the same module with "isolation": "process";
// each call is a read execute through the runtime's whole pipeline, without HTTP.
import { rm } from "node:fs/promises";
import path from "node:path";
import { loadHostConfig, startHost } from "@toolpact/server";
import { serveDriver } from "../lib/driver.mjs";
import { scratchDir } from "../lib/scratch.mjs";
import { PLUGIN_DIRS, PROVIDER_ID, READ_REF, mintActorToken, setUpTenant } from "../lib/tenant.mjs";
import { hostSecrets, writeHostConfig } from "../lib/toolpact-host.mjs";
import { checkItem, inputOf } from "../lib/work.mjs";
import { writeIsolatedItems } from "./items-isolated.mjs";

const [ITEMS_DIR, CALLER_DIR] = PLUGIN_DIRS;

async function startItemsHost({ isolated }) {
  const dir = await scratchDir("toolpact-isolation-");
  const itemsDir = isolated ? await writeIsolatedItems(dir) : ITEMS_DIR;
  await writeHostConfig(path.join(dir, "toolpact.config.json"), { plugins: [itemsDir, CALLER_DIR], database: path.join(dir, "toolpact.db") });
  const { actorSecret, env } = hostSecrets();
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
