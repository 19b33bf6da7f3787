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
export {
  createNodeHandler,
  createFetchHandler,
  type ToolpactHandlerOptions,
  type ToolpactNodeHandler,
  type ToolpactFetchHandler,
} from "./mount.js";
export type { ToolpactRoutesOptions } from "./fetch-handler.js";
export { CONFIRMATION_PAGE_HEADERS, CSRF_HEADER } from "./confirmation-page.js";
export { ID_TOKEN_ALGORITHMS, type ConfirmationLoginOptions } from "./confirmation-login.js";
export { derivePresenceSessionSecret, type PresenceSession } from "./presence-session.js";
export { serveStdio, readKeysFile, CALLER_KEY_ENV_VARS, type CallerKeySource, type StdioBridge } from "@toolpact/mcp";
export { createInProcessTransport, type InProcessTransportOptions } from "./in-process-transport.js";
export { toPublicError, toErrorShape, type PublicError, type ErrorShape, type ErrorShapeData } from "./errors.js";
export { jsonLineLogger, silentLogger, type Logger } from "./logger.js";
export { HostError } from "./host/host-error.js";
export { hostConfigJsonSchema, CONFIG_SCHEMA_ID } from "./host/config-json-schema.js";
export {
  loadHostConfig,
  CONFIG_FILE,
  DEFAULT_DATABASE,
  type HostConfig,
  type DatabaseOptions,
  type HostRetention,
  type LoadHostConfigOptions,
} from "./host/config.js";
export { readSecrets, SECRET_ENV_VARS, type ResolvedSecrets } from "./host/secrets.js";
export { reexecWithoutSecrets, receiveHandedOverSecrets, secretsInEnvironment, type Reexecution } from "./host/secret-handover.js";
export { openAuditAccess, readAuditKey, type AuditAccess } from "./host/audit-access.js";
export {
  CHAINED_FIELDS,
  checkpointActivity,
  exportActivity,
  listedChainSource,
  storeChainSource,
  verifyActivityChain,
  type ActivityCheckpointRecord,
  type ActivityExportRecord,
  type AuditReport,
  type ChainedActivityRecord,
  type CheckpointRun,
} from "@toolpact/runtime";
export { migrateDatabase, describeDatabase, openStore, type MigrationResult } from "./host/database.js";
export { startHost, DEV_ACTOR_ISSUER, type StartHostOptions, type RunningHost, type ConfirmationRequested } from "./host/start-host.js";
export { oauthConfigSchema, parseOAuthConfig, type OAuthConfig, type OAuthConfigInput, type OAuthIssuerConfig } from "./oauth/oauth-config.js";
export {
  PermissionPolicy,
  normalizePolicy,
  policyIssues,
  explainPolicyDecision,
  type PolicyExplanation,
  type PolicyTool,
  type ActivityRecord,
} from "@toolpact/runtime";
