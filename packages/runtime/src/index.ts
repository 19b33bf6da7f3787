export { createRuntime, type ToolpactRuntime, type RuntimeMetrics } from "./runtime.js";
export type { RuntimeOptions, RuntimeLogger, RetentionOptions } from "./options.js";
export { parseSigningKeys, checkSecrets, MIN_SECRET_BYTES, type SigningKey, type HostSecrets } from "./secrets.js";
export type { ActorTokenConfig } from "./actor-token.js";
export { createSqliteStore, type SqliteStoreOptions } from "./store/sqlite-store.js";
export type {
  Store,
  TenantConfigRecord,
  PluginInstallRecord,
  PluginKeyRecord,
  OperationRecord,
  IdempotencyScope,
  IdempotencyRecord,
  ConsumedTokenRecord,
  ActivityRecord,
  OperationBegin,
  OperationBeginResult,
  OperationSettle,
  OperationSettleResult,
  LeaseRenewal,
  ActivityListQuery,
  PruneRequest,
  PruneResult,
} from "./store/store.js";
export type { PluginSdk, PluginTools, ToolCaller, ActorBoundSdk } from "./plugin-sdk.js";
export { CONFIRMATION_TOKEN_TYPE, CONFIRMATION_AUDIENCE } from "./confirmation-token.js";
export type {
  Runtime,
  RuntimeAdmin,
  Principal,
  CallerCredentials,
  ToolListing,
  OperationState,
  OperationView,
  ActivityKind,
  ActivityPhase,
  ActivityOutcome,
  ActivityEvent,
  ActivityQuery,
  ActivityPage,
  PolicyRule,
  TenantPolicy,
} from "./api.js";
