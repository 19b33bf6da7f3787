export { appRouter, createRouterCaller, type AppRouter, type ServerContext } from "./router.js";
export {
  createToolpactServer,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_SESSION_TTL_SECONDS,
  type ToolpactServer,
  type ToolpactServerOptions,
} from "./http-server.js";
export { CONFIRMATION_PAGE_HEADERS, CSRF_HEADER } from "./confirmation-page.js";
export { derivePresenceSessionSecret, type PresenceSession } from "./presence-session.js";
export { serveStdio, readKeysFile, CALLER_KEY_ENV_VARS, type CallerKeySource, type StdioBridge } from "@toolpact/mcp";
export { createInProcessTransport, type InProcessTransportOptions } from "./in-process-transport.js";
export { toPublicError, toErrorShape, type PublicError, type ErrorShape, type ErrorShapeData } from "./errors.js";
export { jsonLineLogger, silentLogger, type Logger } from "./logger.js";
export {
  startHost,
  loadHostConfig,
  migrateDatabase,
  describeDatabase,
  readSecrets,
  HostError,
  SECRET_ENV_VARS,
  CONFIG_FILE,
  DEFAULT_DATABASE,
  DEV_ACTOR_ISSUER,
  type HostConfig,
  type DatabaseOptions,
  type HostRetention,
  type MigrationResult,
  type LoadHostConfigOptions,
  type ResolvedSecrets,
  type StartHostOptions,
  type RunningHost,
} from "./host.js";
