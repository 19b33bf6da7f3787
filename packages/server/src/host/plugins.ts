import path from "node:path";
import { importActivate, PluginLoadError, readPluginFolder, runActivate, type PluginFolder, type ToolpactRuntime } from "@toolpact/runtime";
import { activateIsolated } from "../isolation/isolated-provider.js";
import { activateUpstreamPlugin, type UpstreamHostOptions } from "../upstream/upstream-plugin.js";
import { UpstreamConfigError } from "../upstream/upstream-endpoint.js";
import type { UpstreamSupervisor } from "../upstream/upstream-supervisor.js";
import { HostError } from "./host-error.js";

/** A plugin folder's manifest and, when it has code to run, its module exporting `activate(sdk)`. */
export type LoadedPlugin = PluginFolder;

/** Checks every plugin folder (manifest, module, unique id); throws `HostError` listing every problem, loading none. */
export async function loadPlugins(dirs: readonly string[]): Promise<LoadedPlugin[]> {
  const plugins: LoadedPlugin[] = [];
  const problems: string[] = [];
  const seen = new Map<string, string>();
  let invalid = 0;
  for (const dir of dirs) {
    const checked = await readPluginFolder(dir);
    const earlier = Array.isArray(checked) ? undefined : seen.get(checked.manifest.id);
    if (Array.isArray(checked) || earlier !== undefined) {
      invalid++;
      problems.push(
        ...(Array.isArray(checked)
          ? checked
          : [`${path.join(dir, "plugin.json")}: plugin id "${checked.manifest.id}" is already loaded from ${earlier}: list each plugin once`]),
      );
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

/**
 * Imports a plugin's module and runs its `activate(sdk)`; a plugin with no module (a caller over HTTP or MCP)
 * has nothing to run; a plugin with `upstream` connects to its MCP server, and one with `"isolation": "process"`
 * runs its module in a child process: either's supervisor is returned for the host to stop.
 */
export async function activatePlugin(plugin: LoadedPlugin, runtime: ToolpactRuntime, upstream: UpstreamHostOptions): Promise<UpstreamSupervisor | undefined> {
  try {
    if (plugin.manifest.upstream !== undefined) return await activateUpstreamPlugin(plugin, runtime, upstream);
    if (plugin.manifest.isolation === "process") return await activateIsolated(plugin, runtime, upstream);
    const activate = await importActivate(plugin);
    if (activate !== undefined) await runActivate(plugin.manifest.id, activate, runtime.sdkFor(plugin.manifest.id));
    return undefined;
  } catch (error) {
    if (error instanceof PluginLoadError || error instanceof UpstreamConfigError) throw new HostError(error.message, [], { cause: error.cause });
    throw error;
  }
}
