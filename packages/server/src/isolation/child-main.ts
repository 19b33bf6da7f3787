/**
 * The entry of an isolated provider's child process, started by the host as
 * `node --max-old-space-size=<MB> child-main.js <module file> <plugin id>` with only the plugin's declared
 * environment. It imports the module, runs its `activate(sdk)` with the child's SDK, and serves the tools it
 * provided over MCP on stdin/stdout. stdout belongs to MCP: the plugin's console writes to stderr, which the
 * host logs. A module that cannot load or activate ends the child with its reason on stderr.
 */
import { Console } from "node:console";
import { pathToFileURL } from "node:url";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { createChildSdk } from "./child-sdk.js";
import { createChildServer } from "./child-server.js";

/** The exit code of a child whose module could not be loaded or activated. */
export const CHILD_LOAD_FAILED_EXIT = 78;

async function main(): Promise<void> {
  const [moduleFile, pluginId] = process.argv.slice(2);
  if (moduleFile === undefined || pluginId === undefined) {
    process.stderr.write("usage: child-main.js <module file> <plugin id> (the toolpact host starts this; do not run it by hand)\n");
    process.exit(64);
  }
  globalThis.console = new Console({ stdout: process.stderr, stderr: process.stderr });
  const { sdk, provided } = createChildSdk(pluginId);
  try {
    const loaded = (await import(pathToFileURL(moduleFile).href)) as { activate?: unknown };
    if (typeof loaded.activate !== "function") throw new Error(`${moduleFile} exports no activate(sdk) function`);
    await (loaded.activate as (sdk: unknown) => unknown)(sdk);
  } catch (error) {
    process.stderr.write(`plugin "${pluginId}": loading ${moduleFile} in its isolated process failed: ${(error as Error)?.message ?? String(error)}\n`);
    process.exit(CHILD_LOAD_FAILED_EXIT);
  }
  const server = createChildServer(pluginId, provided);
  // The host closing stdin (its shutdown, or it died) ends the child.
  server.onclose = () => process.exit(0);
  await server.connect(new StdioServerTransport());
}

await main();
