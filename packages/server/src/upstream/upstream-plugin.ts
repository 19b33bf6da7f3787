import { DEFAULT_UPSTREAM_MAX_IN_FLIGHT } from "@toolpact/contract";
import type { Logger, PluginFolder, ToolpactRuntime } from "@toolpact/runtime";
import { upstreamEndpointOf } from "./upstream-endpoint.js";
import { UpstreamSupervisor, type UpstreamSupervisorOptions } from "./upstream-supervisor.js";
import { UpstreamTools } from "./upstream-tools.js";

/** How a host starts the upstream plugins it loads. */
export interface UpstreamHostOptions {
  readonly logger: Logger;
  /** The host's environment (its secrets already removed), from which `passEnv` copies. */
  readonly env: NodeJS.ProcessEnv;
  /** Supervision knobs for tests and embedding hosts (back-off, connect timeout, revision). */
  readonly supervision?: Pick<UpstreamSupervisorOptions, "restartDelayMs" | "connectTimeoutMs" | "revision">;
}

/**
 * Activates a plugin whose manifest names an upstream MCP server: resolves the endpoint (a bad `cwd`,
 * `passEnv` or token file throws UpstreamConfigError), provides every declared tool through the plugin's
 * SDK, and connects. A server that cannot be reached yet does not stop the host: its tools answer
 * "not connected" (nothing sent) while the supervisor retries with back-off, and the log says why.
 * @returns the supervisor, which the host closes when it stops
 */
export async function activateUpstreamPlugin(plugin: PluginFolder, runtime: ToolpactRuntime, options: UpstreamHostOptions): Promise<UpstreamSupervisor> {
  const { manifest } = plugin;
  const declaration = manifest.upstream!;
  const endpoint = upstreamEndpointOf(manifest.id, declaration, { dir: plugin.dir, env: options.env });
  let tools: UpstreamTools | undefined;
  const supervisor = new UpstreamSupervisor({
    ...options.supervision,
    pluginId: manifest.id,
    endpoint,
    logger: options.logger,
    maxInFlight: declaration.maxInFlight ?? DEFAULT_UPSTREAM_MAX_IN_FLIGHT,
    onConnected: (connection) => tools?.check(connection),
  });
  tools = new UpstreamTools(manifest, supervisor, options.logger);
  tools.provideAll(runtime.sdkFor(manifest.id));
  await supervisor.start().catch((error: unknown) => {
    options.logger.error({
      event: "upstream_start_failed",
      pluginId: manifest.id,
      errorClass: (error as Error)?.name ?? typeof error,
      message: String((error as Error)?.message),
      effect: "its tools answer PROVIDER_FAILED (nothing sent) until it connects; retrying with back-off",
    });
  });
  return supervisor;
}
