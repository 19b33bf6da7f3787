import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { formatDiagnostic, loadManifest, type Manifest } from "@toolpact/contract";
import type { PluginSdk } from "../plugin-sdk.js";

/** What loading plugin folders needs of a runtime. */
export interface PluginHost {
  registerPlugin(manifest: Manifest): void;
  sdkFor(pluginId: string): PluginSdk;
}

/** A plugin folder as a host loads it: its manifest, and its module when it has code to run. */
export interface PluginFolder {
  readonly dir: string;
  readonly manifestFile: string;
  readonly manifest: Manifest;
  /**
   * The module exporting `activate(sdk)`. Undefined for a caller that declares nothing to provide (no
   * tools, gates, hooks or guards) and ships no module: it calls over HTTP or MCP with a plugin key; and
   * always for a plugin with `upstream` (an MCP server provides its tools; a module there is not run).
   */
  readonly moduleFile: string | undefined;
  /** Manifest warnings (valid, but e.g. keywords codegen cannot express), as `file:line:col` lines. */
  readonly warnings: readonly string[];
}

/** What a plugin's module exports for the host. */
export type ActivatePlugin = (sdk: PluginSdk) => unknown;

/** A plugin's module could not be imported or activated; the message names the plugin and the file. */
export class PluginLoadError extends Error {
  override readonly name = "PluginLoadError";
}

/**
 * True when a manifest declares something the host must run a module for: tools, gates, hooks or guards.
 * A plugin whose tools an upstream MCP server provides has no module: the host connects to the server.
 */
export function providesCode(manifest: Manifest): boolean {
  if (manifest.upstream !== undefined) return false;
  return manifest.tools.length + manifest.gates.length + manifest.hooks.length + manifest.guards.length > 0;
}

/** A plugin folder's manifest and module, or every problem that keeps it from loading. */
export async function readPluginFolder(dir: string): Promise<PluginFolder | string[]> {
  const manifestFile = path.join(dir, "plugin.json");
  if (!existsSync(manifestFile)) return [`${manifestFile}: not found: each plugin folder needs a plugin.json manifest`];
  const result = await loadManifest(manifestFile);
  if (!result.ok) return result.diagnostics.map((diagnostic) => formatDiagnostic(diagnostic));
  const moduleFile = result.manifest.upstream === undefined ? await pluginModule(dir) : undefined;
  if (moduleFile === undefined && providesCode(result.manifest)) {
    return [
      `${dir}: no plugin module for "${result.manifest.id}", which declares ${declaredKinds(result.manifest)}: ` +
        `set "main" or "exports" in its package.json, or add index.js or dist/index.js exporting activate(sdk)`,
    ];
  }
  return { dir, manifestFile, manifest: result.manifest, moduleFile, warnings: result.warnings.map((warning) => formatDiagnostic(warning)) };
}

/** Imports a plugin folder's module and returns its `activate(sdk)`; undefined for a folder with no module. */
export async function importActivate(folder: PluginFolder): Promise<ActivatePlugin | undefined> {
  if (folder.moduleFile === undefined) return undefined;
  let loaded: { activate?: unknown };
  try {
    loaded = (await import(pathToFileURL(folder.moduleFile).href)) as { activate?: unknown };
  } catch (error) {
    throw new PluginLoadError(`plugin "${folder.manifest.id}": loading ${folder.moduleFile} failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (typeof loaded.activate !== "function") {
    throw new PluginLoadError(`plugin "${folder.manifest.id}": ${folder.moduleFile} exports no activate(sdk) function`);
  }
  return loaded.activate as ActivatePlugin;
}

/** How long `activate(sdk)` may take before start-up gives up on it. */
export const ACTIVATE_TIMEOUT_MS = 30_000;

/**
 * Runs a plugin's `activate(sdk)`; a throw, a rejection, or an answer that does not settle within
 * `timeoutMs` becomes a PluginLoadError naming the plugin (a host that waited forever would never listen).
 */
export async function runActivate(pluginId: string, activate: ActivatePlugin, sdk: PluginSdk, timeoutMs = ACTIVATE_TIMEOUT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const seconds = timeoutMs / 1000;
      reject(
        new PluginLoadError(
          `plugin "${pluginId}": activate(sdk) did not settle within ${seconds} s: provide the tools and return; ` +
            "start long work (connections, warm-up) without awaiting it in activate",
        ),
      );
    }, timeoutMs);
  });
  try {
    await Promise.race([Promise.resolve().then(() => activate(sdk)), timedOut]);
  } catch (error) {
    if (error instanceof PluginLoadError) throw error;
    throw new PluginLoadError(`plugin "${pluginId}": activate(sdk) failed: ${(error as Error).message}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Loads plugin folders into a runtime the way `toolpact serve` does: checks every folder first (listing
 * every problem, loading none), registers each manifest in order, then imports each module and runs its
 * `activate(sdk)`. For an app that embeds the runtime (`createNodeHandler`, `createFetchHandler`). A plugin
 * with `"isolation": "process"` is refused: only the host runs a module in a child process.
 * @throws PluginLoadError naming each folder's problems, or the plugin whose module failed
 */
export async function loadPluginFolders(runtime: PluginHost, dirs: readonly string[]): Promise<Manifest[]> {
  const folders: PluginFolder[] = [];
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const dir of dirs) {
    const folder = await readPluginFolder(dir);
    if (Array.isArray(folder)) {
      problems.push(...folder);
      continue;
    }
    const earlier = seen.get(folder.manifest.id);
    if (earlier !== undefined)
      problems.push(`${folder.manifestFile}: plugin id "${folder.manifest.id}" is already loaded from ${earlier}: list each plugin once`);
    // Running an isolated plugin's module here would drop its isolation without a word: fail closed.
    if (folder.manifest.isolation === "process") {
      problems.push(
        `${folder.manifestFile}: plugin "${folder.manifest.id}" asks for "isolation": "process", which the toolpact host ` +
          "(toolpact serve, or startHost from @toolpact/server) provides; loadPluginFolders runs modules in this process: " +
          'start it with the host, or remove "isolation" if it may run in this process',
      );
    }
    seen.set(folder.manifest.id, dir);
    folders.push(folder);
  }
  if (problems.length > 0) throw new PluginLoadError(`plugin folders cannot be loaded; nothing was loaded:\n${problems.join("\n")}`);
  for (const folder of folders) runtime.registerPlugin(folder.manifest);
  for (const folder of folders) {
    const activate = await importActivate(folder);
    if (activate !== undefined) await runActivate(folder.manifest.id, activate, runtime.sdkFor(folder.manifest.id));
  }
  return folders.map((folder) => folder.manifest);
}

function declaredKinds(manifest: Manifest): string {
  const kinds = (["tools", "gates", "hooks", "guards"] as const).filter((kind) => manifest[kind].length > 0);
  return kinds.join(" and ");
}

/** The module a plugin folder names: package.json `exports` or `main`, else `index.js`, else `dist/index.js`. */
async function pluginModule(dir: string): Promise<string | undefined> {
  const packageFile = path.join(dir, "package.json");
  const candidates: string[] = [];
  if (existsSync(packageFile)) {
    try {
      const pkg = JSON.parse(await readFile(packageFile, "utf8")) as { exports?: unknown; main?: unknown };
      const fromExports = exportTarget(pkg.exports);
      if (fromExports !== undefined) candidates.push(fromExports);
      if (typeof pkg.main === "string") candidates.push(pkg.main);
    } catch {
      // an unreadable package.json falls back to the conventional file names
    }
  }
  candidates.push("index.js", "dist/index.js");
  for (const candidate of candidates) {
    const file = path.resolve(dir, candidate);
    if (file.startsWith(path.resolve(dir) + path.sep) && existsSync(file)) return file;
  }
  return undefined;
}

function exportTarget(exports: unknown): string | undefined {
  if (typeof exports === "string") return exports;
  if (typeof exports !== "object" || exports === null || Array.isArray(exports)) return undefined;
  const record = exports as Record<string, unknown>;
  if ("." in record) return exportTarget(record["."]);
  for (const condition of ["import", "node", "default"]) {
    const target = exportTarget(record[condition]);
    if (target !== undefined) return target;
  }
  return undefined;
}
