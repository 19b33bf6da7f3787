// bench.items with "isolation": "process": a plugin folder of its own whose module re-exports the original.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { PLUGIN_DIRS } from "../lib/tenant.mjs";

/** Writes the isolated copy of bench.items into `dir` and answers its folder. */
export async function writeIsolatedItems(dir) {
  const [itemsDir] = PLUGIN_DIRS;
  const folder = path.join(dir, "items-isolated");
  const manifest = JSON.parse(await readFile(path.join(itemsDir, "plugin.json"), "utf8"));
  await mkdir(folder, { recursive: true });
  // Room for the 32 calls in flight of the throughput rounds (the default bound is 16).
  await writeFile(path.join(folder, "plugin.json"), JSON.stringify({ ...manifest, isolation: "process", process: { maxInFlight: 64 } }));
  await writeFile(path.join(folder, "package.json"), JSON.stringify({ type: "module", main: "./index.js" }));
  await writeFile(path.join(folder, "index.js"), `export { activate } from ${JSON.stringify(pathToFileURL(path.join(itemsDir, "index.js")).href)};\n`);
  return folder;
}
