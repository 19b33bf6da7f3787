import { fileURLToPath } from "node:url";
import { HostError, loadHostConfig, receiveHandedOverSecrets, reexecWithoutSecrets, secretsInEnvironment, startHost, type Logger } from "@toolpact/server";
import type { CliIo } from "../io.js";
import { parseCommandArgs } from "../command-args.js";
import { startTelemetry } from "../otel-sdk.js";
import { listenForStop } from "../stop-signals.js";

const HELP = `usage: toolpact serve [--config toolpact.config.json] [--dev] [--port n] [--host h]

Starts the toolpact server: loads the plugins named in the config, settles operations a crashed
instance left running, then serves the tRPC API at /trpc, the confirmation page at /confirm/ and
GET /healthz, /readyz (503 while the database is unreachable). Set "publicUrl" to the address browsers
reach it at (confirmation links use it).
"database" is a SQLite file (default ./.toolpact/toolpact.db) or a postgres:// URL; TOOLPACT_DATABASE_URL
overrides it. Several instances may share one PostgreSQL database; "databaseOptions" sets its schema,
poolSize, connectionTimeoutMs and statementTimeoutMs. Pending migrations are applied at start-up.
"limits" sets rateLimits (previewsPerMinute, pendingConfirmations), leaseMs, recoveryIntervalMs and
sessionTtlSeconds (the confirmation page's session). "retention" sets activityDays, confirmationHours,
outboxDays, operationDays, idempotencyHours and pruneIntervalMs (how often this instance prunes; 0 turns
it off).
Secrets come from the environment (TOOLPACT_ADMIN_KEY, TOOLPACT_ACTOR_SECRET, TOOLPACT_SIGNING_KEYS,
TOOLPACT_STORAGE_KEY, TOOLPACT_DATABASE_URL), from files that TOOLPACT_<NAME>_FILE names, or from the
config's "secrets"; a missing one, or a _FILE that cannot be read, stops start-up. Secrets given in the
environment are handed to a re-executed server over a pipe, so no plugin can read them back from
/proc/self/environ; this first process stays to forward signals and report the exit code.
--dev generates throwaway secrets for any that are missing and prints them.
OpenTelemetry: with @opentelemetry/sdk-node installed beside toolpact, OTEL_TRACES_EXPORTER=otlp (or
OTEL_METRICS_EXPORTER) starts the SDK, configured by the standard OTEL_* variables (OTEL_SERVICE_NAME,
OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL, ...); see docs/observability.md.
SIGINT or SIGTERM shuts down gracefully: in-flight calls finish first.`;

/** `toolpact serve`: starts a host and runs until SIGINT or SIGTERM; 0 after a clean shutdown, 1 on start-up errors. */
export async function run(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs({ name: "serve", help: HELP }, io, {
    args: [...args],
    options: {
      config: { type: "string", short: "c" },
      dev: { type: "boolean" },
      port: { type: "string", short: "p" },
      host: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (typeof parsed === "number") return parsed;
  const { values } = parsed;
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65_535)) {
    io.stderr(`toolpact serve: --port must be an integer from 0 to 65535, got "${values.port}"`);
    return 2;
  }
  const dev = values.dev === true;
  const logger = lineLogger(io);
  let handedOver: boolean;
  try {
    handedOver = await receiveHandedOverSecrets();
  } catch (error) {
    io.stderr(`toolpact serve: ${(error as Error).message}`);
    return 1;
  }
  // Only this process's own environment is readable from /proc/self/environ: secrets there are handed
  // to a re-executed server; secrets an in-process caller passes in io.env never were in it.
  if (!handedOver && secretsInEnvironment(process.env).length > 0 && process.platform !== "win32") {
    return reexecWithoutSecrets({ script: fileURLToPath(new URL("../bin.js", import.meta.url)), args: ["serve", ...args] });
  }

  // Before the host: the runtime looks for a registered tracer and meter provider once, when it is created.
  const stopTelemetry = await startTelemetry((line) => io.stderr(`toolpact serve: ${line}`));
  let host;
  let consoleOn = false;
  try {
    const config = await loadHostConfig({
      cwd: io.cwd,
      env: io.env,
      allowMissing: dev,
      ...(values.config === undefined ? {} : { file: values.config }),
      ...(values.host === undefined ? {} : { host: values.host }),
      ...(port === undefined ? {} : { port }),
    });
    consoleOn = config.console.enabled;
    host = await startHost({ config, dev, logger, env: io.env });
  } catch (error) {
    if (error instanceof HostError) {
      io.stderr(`toolpact serve: ${error.message}`);
      for (const detail of error.details) io.stderr(`  ${detail}`);
    } else {
      io.stderr(`toolpact serve: start-up failed unexpectedly: ${(error as Error)?.stack ?? String(error)}`);
    }
    await stopTelemetry?.();
    return 1;
  }

  if (host.generatedSecrets.length > 0) {
    io.stdout("--dev: generated throwaway secrets (not for production; they change on every start):");
    for (const line of host.generatedSecrets) io.stdout(`  ${line}`);
  }
  if (dev) io.stdout(`--dev: actor tokens are accepted from issuer "${host.actorIssuer}" (HS256 with TOOLPACT_ACTOR_SECRET)`);
  io.stdout(`instance ${host.instanceId} on ${host.database}`);
  io.stdout(`confirmation page at ${host.url}/confirm/ (links use ${host.publicUrl ?? host.url})`);
  if (consoleOn) io.stdout(`operator console at ${host.url}/console (sign in with the admin key)`);
  // Last: scripts and tests take this line to mean the server is ready and everything above is printed.
  io.stdout(`toolpact serving ${host.plugins.length} plugin${host.plugins.length === 1 ? "" : "s"} at ${host.url}/trpc`);

  const stop = listenForStop(["SIGINT", "SIGTERM"], () => {
    io.stderr("toolpact serve: stopped without draining");
    process.exit(1);
  });
  const signal = await stop.first;
  io.stdout(`toolpact serve: ${signal}: draining in-flight calls, then stopping (send it again to stop at once)`);
  await host.close();
  await stopTelemetry?.();
  stop.done();
  io.stdout("toolpact serve: stopped");
  return 0;
}

/** Log entries as JSON lines on the command's stderr. */
function lineLogger(io: CliIo): Logger {
  const write = (level: string) => (entry: Readonly<Record<string, unknown>>) => io.stderr(JSON.stringify({ level, at: new Date().toISOString(), ...entry }));
  return { info: write("info"), warn: write("warn"), error: write("error") };
}
