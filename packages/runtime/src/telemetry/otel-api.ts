/**
 * `@opentelemetry/api`, an optional peer: imported once, when a runtime is created, and only used when an
 * application registered a tracer or meter provider before that. Without the package, or with nothing
 * registered, the runtime does no telemetry work at all beyond one undefined check per call.
 */
import type * as OtelApiModule from "@opentelemetry/api";

/** The OpenTelemetry API, as loaded. */
export type OtelApi = typeof OtelApiModule;

let loading: Promise<OtelApi | undefined> | undefined;

/** The OpenTelemetry API when it is installed beside the runtime; undefined otherwise (never throws). */
export function loadOtelApi(): Promise<OtelApi | undefined> {
  loading ??= import("@opentelemetry/api").then(
    (api) => api as OtelApi,
    () => undefined,
  );
  return loading;
}
