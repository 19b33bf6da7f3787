import { existsSync } from "node:fs";
import { createHttpTransport } from "@toolpact/client";
import { createToolClients } from "./generated/index.js";
import { addAndList } from "./add-and-list.js";

// `toolpact dev` writes this caller's URL, plugin key and a user's actor token here; elsewhere, set them yourself.
if (process.env.PLUGIN_KEY === undefined && existsSync(".toolpact/dev.env")) process.loadEnvFile(".toolpact/dev.env");

/** A variable this script needs; `toolpact dev` prints each of them. */
function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set: \`toolpact dev\` prints it (see its output)`);
  return value;
}

const tools = createToolClients(
  createHttpTransport({
    url: process.env.TOOLPACT_URL ?? "http://127.0.0.1:4400",
    pluginKey: required("PLUGIN_KEY"), // this caller's key, issued for its tenant
    actorToken: required("ACTOR_TOKEN"), // the user's actor token, from the identity service (`toolpact token`)
  }),
);

const items = await addAndList(tools, process.argv[2] ?? "Buy milk");
console.log(`the list: ${items.join(", ")}`);
