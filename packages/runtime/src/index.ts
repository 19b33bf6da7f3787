export { createRuntime, type ToolpactRuntime, type RuntimeMetrics } from "./runtime.js";
export type { RuntimeOptions, RetentionOptions, RateLimitOptions, TelemetryOptions } from "./options.js";
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
  ActivityChainStore,
  ActivityCheckpointRecord,
  ChainedActivityRecord,
  ChainExtension,
  ChainLink,
  ChainRange,
} from "./store/store.js";
export { chainGenesis, linkHash, canonicalEvent, CHAINED_FIELDS } from "./audit/chain-hash.js";
export { deriveAuditKey, checkpointVerifier, AUDIT_KEY_INFO, type AuditKey, type CheckpointClaims } from "./audit/checkpoint-key.js";
export { storeChainSource, listedChainSource, type ChainSource } from "./audit/chain-source.js";
export {
  verifyActivityChain,
  type AuditReport,
  type AuditProblem,
  type AuditProblemKind,
  type TenantAudit,
} from "./audit/chain-verifier.js";
export { checkpointActivity, type CheckpointOptions, type CheckpointRun } from "./audit/chain-checkpointer.js";
export { exportActivity, type ActivityExportQuery, type ActivityExportRecord } from "./audit/chain-export.js";
export { AUDIT_DEFAULTS, type AuditOptions } from "./audit/audit-options.js";
export { UnansweredCommit, isUnansweredCommit } from "./store/unanswered-commit.js";
export type { PluginSdk, PluginTools, ToolCaller, ActorBoundSdk, SeamProvider } from "./plugin-sdk.js";
export {
  loadPluginFolders,
  readPluginFolder,
  importActivate,
  runActivate,
  ACTIVATE_TIMEOUT_MS,
  providesCode,
  PluginLoadError,
  type PluginFolder,
  type PluginHost,
  type ActivatePlugin,
} from "./plugin-code/plugin-folder.js";
export { ProviderOutcomeUnknown, ProviderBusy, ProviderRefusal, PROVIDER_REFUSAL_MAX_CHARS } from "@toolpact/contract";
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
export {
  PermissionPolicy,
  normalizePolicy,
  policyIssues,
  explainPolicyDecision,
  type PolicyExplanation,
  type PolicyTool,
  type PolicyRuleRef,
  type PermissionDecision,
} from "./permission-policy.js";
export { PRESENCE_AUDIENCE, PRESENCE_MAX_TTL_SECONDS, PRESENCE_REQUEST_CLAIM } from "./identity/presence-token.js";
export { isNameClaim } from "./identity/name-claims.js";
export { ACTOR_MAX_LIFETIME_CEILING_SECONDS, DEFAULT_ACTOR_MAX_LIFETIME_SECONDS } from "./identity/actor-token.js";
export { CONFIRMATION_TOKEN_TYPE, CONFIRMATION_AUDIENCE } from "./confirmation/confirmation-tokens.js";
export { BOUND_CALL_CLAIMS, type BoundCall } from "./confirmation/binding.js";
export type {
  Runtime,
  RuntimeAdmin,
  Principal,
  CallerCredentials,
  CallerTransport,
  CallTraceContext,
  ToolChanges,
  ToolListing,
  OperationState,
  OperationView,
  ActivityKind,
  ActivityPhase,
  ShadowOutcome,
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
export { traceContextOf, parseTraceparent, formatTraceparent, type ParsedTraceparent } from "./telemetry/trace-context.js";
export type {
  RuntimeTasks,
  StartTaskOptions,
  TaskCancelAnswer,
  TaskConfirmation,
  TaskInputAnswer,
  TaskOutcome,
  TaskStatus,
  TaskView,
} from "./tasks/task-api.js";
export type { GrantView, RuntimeGrants } from "./grants/runtime-grants.js";
export type { GrantChoice } from "./grants/grant-from-request.js";
export { TASK_STATES, isTerminalTask } from "./tasks/task-states.js";
