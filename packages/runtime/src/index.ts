export { createRuntime, type ToolpactRuntime, type RuntimeMetrics } from "./runtime.js";
export type { RuntimeOptions, RetentionOptions, RateLimitOptions } from "./options.js";
export { RETENTION_DEFAULTS } from "./options.js";
export { silentLogger, type Logger } from "./logger.js";
export { parseSigningKeys, checkSecrets, MIN_SECRET_BYTES, type SigningKey, type HostSecrets } from "./secrets.js";
export type { ActorTokenConfig } from "./identity/actor-token.js";
export { createSqliteStore } from "./store/sqlite/sqlite-store.js";
export type { SqliteStoreOptions } from "./store/sqlite/settings.js";
export { createPostgresStore, migratePostgres } from "./store/postgres/postgres-store.js";
export type { PostgresStoreOptions } from "./store/postgres/settings.js";
export { POSTGRES_POOL_DEFAULTS } from "./store/postgres/settings.js";
export { createStore, isPostgresUrl, type CreateStoreOptions } from "./store/create-store.js";
export type {
  Store,
  TenantConfigRecord,
  PluginInstallRecord,
  PluginKeyRecord,
  PluginKeyLookup,
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
  PresenceTokenUse,
  PruneResult,
  ActivationRecord,
  OutboxRecord,
  OutboxClaimQuery,
  PluginEnabledChange,
  RunRecord,
  ConfirmationState,
  ConfirmationRecord,
  ConfirmationCreateResult,
  ConfirmationTransition,
  ConfirmationBindingQuery,
  LeaseTakeover,
  SettledOperationWrite,
  SettledOperationResult,
  StoreChange,
  StoreChanges,
} from "./store/store.js";
export { UnansweredCommit, isUnansweredCommit } from "./store/unanswered-commit.js";
export type { PluginSdk, PluginTools, ToolCaller, ActorBoundSdk, SeamProvider } from "./plugin-sdk.js";
export {
  loadPluginFolders,
  readPluginFolder,
  importActivate,
  runActivate,
  providesCode,
  PluginLoadError,
  type PluginFolder,
  type PluginHost,
  type ActivatePlugin,
} from "./plugin-code/plugin-folder.js";
export {
  DEFAULT_SEAM_TIMEOUT_MS,
  type GateCall,
  type GateDecision,
  type GateHandler,
  type HookCall,
  type HookHandler,
  type StagedReaction,
  type GuardCall,
  type GuardDecision,
  type GuardHandler,
  type SeamContext,
} from "./seams.js";
export { MAX_CONFIRMATION_WAIT_MS } from "@toolpact/contract";
export { PRESENCE_AUDIENCE, PRESENCE_MAX_TTL_SECONDS, PRESENCE_REQUEST_CLAIM } from "./identity/presence-token.js";
export { isNameClaim } from "./identity/name-claims.js";
export { ACTOR_MAX_LIFETIME_CEILING_SECONDS, DEFAULT_ACTOR_MAX_LIFETIME_SECONDS } from "./identity/actor-token.js";
export { CONFIRMATION_TOKEN_TYPE, CONFIRMATION_AUDIENCE } from "./confirmation/confirmation-tokens.js";
export type {
  Runtime,
  RuntimeAdmin,
  Principal,
  CallerCredentials,
  CallerTransport,
  ToolChanges,
  ToolListing,
  OperationState,
  OperationView,
  ActivityKind,
  ActivityPhase,
  ActivityOutcome,
  ActivityEvent,
  ActivityQuery,
  ActivityPage,
  GrantLimits,
  PolicyRule,
  TenantPolicy,
  EffectVerificationLevels,
  RunOptions,
  RunHandle,
  WaitConfirmationOptions,
  ConfirmationPerson,
  ConfirmationAttestation,
  PresenceIdentity,
  ConfirmationRequestState,
  ConfirmationRequestView,
  ConfirmationDecision,
  Activation,
  RecoveryRule,
  RecoveryPolicy,
  OutboxClaim,
  OutboxItem,
} from "./api.js";
export { TOOL_SCOPES, missingToolScope, toolScopeOf } from "./tool-scopes.js";
export {
  ADMIN_VIEW_MAX_EVENTS,
  ADMIN_VIEW_SCAN_LIMIT,
  ACTIVITY_CHART_BUCKETS,
  type ActivityBucket,
  type AdminViews,
  type AdminActivityFilter,
  type AdminActivityResult,
  type OperationStory,
  type PendingConfirmationView,
  type AdminPluginView,
  type AdminPolicyView,
  type AdminKeyView,
} from "./admin-views.js";
