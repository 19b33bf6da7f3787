/**
 * The OpenTelemetry Node SDK for `toolpact serve` and `dev`, so an operator needs no code: started when
 * `@opentelemetry/sdk-node` is installed beside toolpact and the standard `OTEL_*` variables ask for an
 * exporter (`OTEL_TRACES_EXPORTER` or `OTEL_METRICS_EXPORTER` naming one other than `none`). The SDK reads
 * the rest itself (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_PROTOCOL`, `OTEL_SERVICE_NAME`, ...).
 * Started before the host, so the runtime finds its providers registered; shut down after it, flushing
 * what is still batched.
 */

/** Flushes and stops the SDK. */
export type StopTelemetry = () => Promise<void>;

/** True when `OTEL_TRACES_EXPORTER` or `OTEL_METRICS_EXPORTER` names an exporter (not only `none`), and the SDK is not disabled. */
export function telemetryAsked(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  return [env.OTEL_TRACES_EXPORTER, env.OTEL_METRICS_EXPORTER].some((list) =>
    (list ?? "").split(",").some((name) => {
      const exporter = name.trim().toLowerCase();
      return exporter !== "" && exporter !== "none";
    }),
  );
}

/**
 * Starts the SDK when the environment asks for it; its stop, or undefined when it was not started (not
 * asked, or not installed: then `warn` says how to install it). The SDK reads `process.env`.
 */
export async function startTelemetry(warn: (line: string) => void): Promise<StopTelemetry | undefined> {
  if (!telemetryAsked(process.env)) return undefined;
  let sdkNode: typeof import("@opentelemetry/sdk-node");
  try {
    sdkNode = await import("@opentelemetry/sdk-node");
  } catch {
    warn(
      "OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER asks for telemetry, but @opentelemetry/sdk-node is not installed beside toolpact: " +
        "nothing is exported. Install it where toolpact is installed (npm install @opentelemetry/sdk-node@0.223) and start again.",
    );
    return undefined;
  }
  // No instrumentations: toolpact's own spans continue the caller's traceparent; OTEL_* configures the rest.
  const sdk = new sdkNode.NodeSDK({ instrumentations: [] });
  sdk.start();
  return async () => {
    try {
      await sdk.shutdown();
    } catch (error) {
      warn(`the OpenTelemetry SDK did not flush at shutdown: ${(error as Error)?.message ?? String(error)}`);
    }
  };
}
