/**
 * `"isolation": "process"`: a provider module run in a child process of its own, with only its declared
 * environment and a heap limit, under the same supervisor as an upstream MCP server (restart with back-off,
 * calls in flight bounded, stderr to the log, stopped with the host). The host registers one handler per
 * tool the child provides; each sends its call to the child and reads the answer as untrusted. Everything
 * else a call goes through (permission, validation, confirmation, the ledger, output validation, guards)
 * runs in the host as for any provider.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DEFAULT_ISOLATED_MEMORY_MB, DEFAULT_UPSTREAM_MAX_IN_FLIGHT, type Manifest } from "@toolpact/contract";
import { ACTIVATE_TIMEOUT_MS, type PluginFolder, type ToolpactRuntime } from "@toolpact/runtime";
import { HostError } from "../host/host-error.js";
import { upstreamEndpointOf } from "../upstream/upstream-endpoint.js";
import type { UpstreamHostOptions } from "../upstream/upstream-plugin.js";
import { UpstreamSupervisor } from "../upstream/upstream-supervisor.js";
import { ChildWatchdog } from "./child-watchdog.js";
import { isolatedHandler } from "./isolated-handler.js";
import { HANDLER_META_KEY, type HandlerShape } from "./wire.js";

/** Why a manifest cannot run isolated: it declares something only the host's process can run. */
export function isolationProblems(manifest: Manifest): string[] {
  const problems: string[] = [];
  for (const kind of ["gates", "hooks", "guards"] as const) {
    if (manifest[kind].length > 0) {
      problems.push(
        `plugin "${manifest.id}" runs with "isolation": "process", which provides tools only, and declares ${kind}: ` +
          `move its ${kind} to a plugin that runs in the host's process`,
      );
    }
  }
  if (manifest.permissions.includes("tools:call")) {
    problems.push(
      `plugin "${manifest.id}" runs with "isolation": "process", where calling tools is not offered, and holds "tools:call": ` +
        "remove the permission, or run the plugin in the host's process",
    );
  }
  return problems;
}

/**
 * Starts an isolated plugin's child and provides each tool it serves.
 * @returns the supervisor, which the host closes when it stops
 * @throws HostError when the manifest cannot run isolated or the child does not start (its stderr is in the log)
 */
export async function activateIsolated(plugin: PluginFolder, runtime: ToolpactRuntime, options: UpstreamHostOptions): Promise<UpstreamSupervisor | undefined> {
  const { manifest, moduleFile, dir } = plugin;
  const problems = isolationProblems(manifest);
  if (problems.length > 0) throw new HostError(`plugin "${manifest.id}" cannot run isolated`, problems);
  if (moduleFile === undefined) return undefined;
  const memoryMb = manifest.process?.memoryMb ?? DEFAULT_ISOLATED_MEMORY_MB;
  const args = [
    `--max-old-space-size=${memoryMb}`,
    // The young generation lives outside the old-space limit: keep it a small part of the budget.
    `--max-semi-space-size=${Math.max(1, Math.min(16, Math.floor(memoryMb / 16)))}`,
    childEntry(),
    moduleFile,
    manifest.id,
  ];
  // The same rules as an upstream's: only `env` and `passEnv`, and never the host's own secrets.
  const { env = {}, passEnv = [] } = manifest.process ?? {};
  const endpoint = upstreamEndpointOf(manifest.id, { command: process.execPath, args, env, passEnv }, { dir, env: options.env, section: "process" });
  let served: ReadonlyMap<string, HandlerShape> = new Map();
  const supervisor = new UpstreamSupervisor({
    connectTimeoutMs: ACTIVATE_TIMEOUT_MS,
    ...options.supervision,
    // toolpact's own child speaks the 2025-11-25 handshake: no probe process at each start.
    revision: "2025-11-25",
    pluginId: manifest.id,
    endpoint,
    logger: options.logger,
    maxInFlight: manifest.process?.maxInFlight ?? DEFAULT_UPSTREAM_MAX_IN_FLIGHT,
    onConnected: (connection) => {
      if (connection.generation === 1) served = shapesOf(connection.tools);
    },
  });
  try {
    await supervisor.start();
  } catch (error) {
    await supervisor.close();
    throw new HostError(
      `plugin "${manifest.id}": its isolated process did not start: ${(error as Error)?.message ?? String(error)}; its stderr is in the log (upstream_stderr)`,
      [],
      { cause: error },
    );
  }
  const watchdog = new ChildWatchdog({ supervisor, pluginId: manifest.id, logger: options.logger });
  const sdk = runtime.sdkFor(manifest.id);
  try {
    for (const [spec, shape] of served) sdk.tools.provide(spec, isolatedHandler({ supervisor, watchdog, spec, shape, manifest }));
  } catch (error) {
    await supervisor.close();
    throw new HostError(`plugin "${manifest.id}": activate(sdk) in its isolated process failed: ${(error as Error).message}`, [], { cause: error });
  }
  return supervisor;
}

/** The tools a child listed, with the handler shape each names (anything malformed counts as absent). */
function shapesOf(listed: readonly { name: string; _meta?: Record<string, unknown> | undefined }[]): ReadonlyMap<string, HandlerShape> {
  const tools = new Map<string, HandlerShape>();
  for (const tool of listed) {
    const shape = tool._meta?.[HANDLER_META_KEY] as Partial<HandlerShape> | undefined;
    tools.set(tool.name, { preview: shape?.preview === true, authorize: shape?.authorize === true });
  }
  return tools;
}

/**
 * The child's entry file: next to this module when built, else (running from TypeScript source, in tests)
 * the built one in the package's dist.
 */
function childEntry(): string {
  const beside = fileURLToPath(new URL("./child-main.js", import.meta.url));
  if (existsSync(beside)) return beside;
  const built = fileURLToPath(new URL("../../dist/isolation/child-main.js", import.meta.url));
  if (existsSync(built)) return built;
  throw new HostError(`the isolated process's entry is missing (${built}): build @toolpact/server (pnpm build)`);
}
