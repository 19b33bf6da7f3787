import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { formatDiagnostic, loadManifest, type Manifest } from "@toolpact/contract";
import type { PluginSdk, ToolpactRuntime } from "@toolpact/runtime";
import { HostError } from "./host-error.js";

/** A plugin folder's manifest and its `activate(sdk)`. */
export interface LoadedPlugin {
  readonly dir: string;
  readonly manifest: Manifest;
  readonly moduleFile: string;
  /** Manifest warnings (valid, but e.g. keywords codegen cannot express), as `file:line:col` lines. */
  readonly warnings: readonly string[];
}

/** Checks every plugin folder (manifest, module, unique id); throws `HostError` listing every problem, loading none. */
export async function loadPlugins(dirs: readonly string[]): Promise<LoadedPlugin[]> {
  const plugins: LoadedPlugin[] = [];
  const problems: string[] = [];
  const seen = new Map<string, string>();
  let invalid = 0;
  for (const dir of dirs) {
    const checked = await checkPlugin(dir, seen);
    if (Array.isArray(checked)) {
      invalid++;
      problems.push(...checked);
    } else {
      seen.set(checked.manifest.id, dir);
      plugins.push(checked);
    }
  }
  if (invalid > 0) {
    throw new HostError(`${invalid === 1 ? "a plugin is" : `${invalid} plugins are`} invalid: nothing was started`, problems);
  }
  return plugins;
}

/** A plugin folder's manifest and module, or the problems that keep it from loading. */
async function checkPlugin(dir: string, seen: ReadonlyMap<string, string>): Promise<LoadedPlugin | string[]> {
  const manifestFile = path.join(dir, "plugin.json");
  if (!existsSync(manifestFile)) return [`${manifestFile}: not found: each plugin folder needs a plugin.json manifest`];
  const result = await loadManifest(manifestFile);
  if (!result.ok) return result.diagnostics.map((diagnostic) => formatDiagnostic(diagnostic));
  const moduleFile = await pluginModule(dir);
  if (moduleFile === undefined) {
    return [`${dir}: no plugin module: set "main" or "exports" in its package.json, or add index.js or dist/index.js`];
  }
  const earlier = seen.get(result.manifest.id);
  if (earlier !== undefined) {
    return [`${manifestFile}: plugin id "${result.manifest.id}" is already loaded from ${earlier}: list each plugin once`];
  }
  return { dir, manifest: result.manifest, moduleFile, warnings: result.warnings.map((warning) => formatDiagnostic(warning)) };
}

/** Imports a plugin's module and runs its `activate(sdk)`. */
export async function activatePlugin(plugin: LoadedPlugin, runtime: ToolpactRuntime): Promise<void> {
  let loaded: { activate?: unknown };
  try {
    loaded = (await import(pathToFileURL(plugin.moduleFile).href)) as { activate?: unknown };
  } catch (error) {
    throw new HostError(`plugin "${plugin.manifest.id}": loading ${plugin.moduleFile} failed: ${(error as Error).message}`, [], {
      cause: error,
    });
  }
  if (typeof loaded.activate !== "function") {
    throw new HostError(`plugin "${plugin.manifest.id}": ${plugin.moduleFile} exports no activate(sdk) function`);
  }
  const activate = loaded.activate as (sdk: PluginSdk) => unknown;
  try {
    await activate(runtime.sdkFor(plugin.manifest.id));
  } catch (error) {
    throw new HostError(`plugin "${plugin.manifest.id}": activate(sdk) failed: ${(error as Error).message}`, [], { cause: error });
  }
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
