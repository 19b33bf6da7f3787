/**
 * `"isolation": "process"`: a provider module run in a child process of its own, with only its declared
 * environment and a heap limit, under a supervisor. The host registers one handler per tool the child
 * provides; each handler sends its call to the child and reads the answer as untrusted. Everything else a
 * call goes through (permission, validation, confirmation, the ledger, output validation, guards) runs in
 * the host as for any provider.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DEFAULT_ISOLATED_MEMORY_MB, DEFAULT_UPSTREAM_MAX_IN_FLIGHT, type Manifest } from "@toolpact/contract";
import { ACTIVATE_TIMEOUT_MS, type Logger, type PluginFolder, type ToolpactRuntime } from "@toolpact/runtime";
import { HostError } from "../host/host-error.js";
import { childEnvironment } from "./child-environment.js";
import { ChildSupervisor } from "./child-supervisor.js";
import { isolatedHandler } from "./isolated-handler.js";

/** The largest message a child may send, bytes: beyond it the child is treated as broken and restarted. */
const MAX_CHILD_MESSAGE_BYTES = 16 * 1024 * 1024;

/** What starting an isolated provider needs from its host. */
export interface IsolationHost {
  readonly logger: Logger;
  /** Stops the child when the host closes. */
  readonly onClose: (stop: () => Promise<void>) => void;
}

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

/** Starts an isolated plugin's child and provides each tool it serves; the child stops when the host closes. */
export async function activateIsolated(plugin: PluginFolder, runtime: ToolpactRuntime, host: IsolationHost): Promise<void> {
  const { manifest, moduleFile } = plugin;
  const env = childEnvironment(manifest, process.env);
  const problems = [...isolationProblems(manifest), ...(Array.isArray(env) ? env : [])];
  if (problems.length > 0 || Array.isArray(env)) throw new HostError(`plugin "${manifest.id}" cannot run isolated`, problems);
  if (moduleFile === undefined) return;
  const memoryMb = manifest.process?.memoryMb ?? DEFAULT_ISOLATED_MEMORY_MB;
  const supervisor = new ChildSupervisor({
    pluginId: manifest.id,
    spawn: {
      command: process.execPath,
      args: [
        `--max-old-space-size=${memoryMb}`,
        // The young generation lives outside the old-space limit: keep it a small part of the budget.
        `--max-semi-space-size=${Math.max(1, Math.min(16, Math.floor(memoryMb / 16)))}`,
        childEntry(),
        moduleFile,
        manifest.id,
      ],
      cwd: plugin.dir,
      env,
      maxMessageBytes: MAX_CHILD_MESSAGE_BYTES,
    },
    maxInFlight: manifest.process?.maxInFlight ?? DEFAULT_UPSTREAM_MAX_IN_FLIGHT,
    logger: host.logger,
    startTimeoutMs: ACTIVATE_TIMEOUT_MS,
    restartDelayMs: 100,
    maxRestartDelayMs: 30_000,
    stableMs: 30_000,
    unresponsiveMs: 1000,
  });
  host.onClose(() => supervisor.close());
  let served: ReadonlyMap<string, { preview: boolean; authorize: boolean }>;
  try {
    served = await supervisor.start();
  } catch (error) {
    await supervisor.close();
    throw new HostError((error as Error).message, [], { cause: error });
  }
  const sdk = runtime.sdkFor(manifest.id);
  try {
    for (const [spec, shape] of served) sdk.tools.provide(spec, isolatedHandler({ supervisor, spec, shape, manifest }));
  } catch (error) {
    await supervisor.close();
    throw new HostError(`plugin "${manifest.id}": activate(sdk) in its isolated process failed: ${(error as Error).message}`, [], { cause: error });
  }
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
