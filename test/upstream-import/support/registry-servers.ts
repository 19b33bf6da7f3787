/**
 * MCP servers from the registry that no one here wrote (root devDependencies, pinned), started as an
 * MCP client starts them: `node <their bin>` over stdio. Never npx: nothing is downloaded by a test.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root. */
export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** The registry servers these tests run. */
export type RegistryServer = "server-filesystem" | "server-memory" | "server-everything";

/** The absolute path of a registry server's bin file, from its installed package.json. */
export function serverBin(server: RegistryServer): string {
  const folder = path.join(ROOT, "node_modules", "@modelcontextprotocol", server);
  const manifest = JSON.parse(readFileSync(path.join(folder, "package.json"), "utf8")) as { bin: string | Record<string, string> };
  const bin = typeof manifest.bin === "string" ? manifest.bin : Object.values(manifest.bin)[0];
  if (bin === undefined) throw new Error(`@modelcontextprotocol/${server} names no bin file`);
  return path.join(folder, bin);
}

/** `-- <node> <bin> ...args`: the command `toolpact import mcp` starts. */
export function serverCommand(server: RegistryServer, ...args: string[]): string[] {
  return ["--", process.execPath, serverBin(server), ...args];
}
