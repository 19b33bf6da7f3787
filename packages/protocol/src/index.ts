/**
 * `@toolpact/protocol`: what travels between a caller and a toolpact server (errors and their wire format,
 * the protocol types, `ToolTransport`, the limits a server enforces), with no dependencies, so a caller's
 * client installs none of the manifest tooling (`@toolpact/contract` re-exports all of it).
 */
export {
  TOOLPACT_ERRORS,
  TOOLPACT_ERROR_CODES,
  ToolpactError,
  isToolpactError,
  isToolpactErrorCode,
  type ToolpactErrorCode,
  type ToolpactErrorData,
  type TrpcErrorCodeName,
  type ValidationIssue,
} from "./errors.js";
export { toToolpactError, type ToolpactErrorWire } from "./error-wire.js";
export {
  exchangeFailure,
  isToolpactAnswer,
  provesNothingRan,
  requestNotSent,
  unrecognisedAnswer,
  withSendFailures,
  withToolpactAnswers,
  type WireCall,
  type WireFetch,
  type WireRequestInit,
  type WireResponse,
} from "./http-status.js";
export { EFFECTS, toolRefOf } from "./protocol.js";
export { ProviderOutcomeUnknown, ProviderBusy, ProviderRefusal, PROVIDER_REFUSAL_MAX_CHARS, shownProviderMessage } from "./provider-signals.js";
export {
  OPERATION_STATES,
  SETTLED_OPERATION_STATES,
  CONFIRMATION_STATES,
  isStateOf,
  type OperationState,
  type SettledOperationState,
  type ConfirmationState,
} from "./states.js";
export type {
  ToolRef,
  ConfirmationInfo,
  ConfirmationStatus,
  PreviewSummary,
  PreviewResult,
  ExecuteResult,
  PreviewOptions,
  ExecuteOptions,
  ActorInfo,
  ToolCallContext,
  ToolExecuteContext,
  AuthorizeDecision,
  ToolHandler,
  TargetedResult,
  ProviderDefinition,
  ToolTransport,
  Effect,
} from "./protocol.js";
export {
  ID_MAX_LENGTH,
  TENANT_ID_MAX_LENGTH,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  RUN_ALLOW_MAX,
  RUN_TTL_MAX_SECONDS,
  MAX_CONFIRMATION_WAIT_MS,
  MAX_ACTIVITY_PAGE,
  OUTBOX_BATCH_MAX,
  OUTBOX_LEASE_MAX_SECONDS,
  POLICY_NAME_MAX_LENGTH,
  TOOL_PATTERN_MAX_LENGTH,
  POLICY_LIST_MAX,
  RECOVERY_ATTEMPTS_MAX,
  MAX_VERIFICATION_LEVEL,
  CONFIRMATION_TTL_MIN_SECONDS,
  CONFIRMATION_TTL_MAX_SECONDS,
  CONFIRMATION_TOKEN_MAX_LENGTH,
  ACTOR_TOKEN_MAX_LENGTH,
  ACTIVITY_CURSOR_MAX_LENGTH,
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_BODY_DEPTH,
  BODY_ENVELOPE_DEPTH,
  DRAIN_MAX_BYTES,
  DEFAULT_MAX_REQUESTS_PER_CALLER,
  DEFAULT_MAX_LONG_POLLS_PER_CALLER,
} from "./limits.js";
export {
  JsonDepthScanner,
  readBoundedJson,
  isNestedDeeperThan,
  tooDeep,
  tooLarge,
  type BodyLimits,
  type BodyRefusal,
  type BoundedBody,
  type ReadBoundedJsonOptions,
} from "./bounded-json.js";
export { readBoundedRequest, type BoundedRequestBody, type RefusalAnswer } from "./bounded-request.js";
export { whenAnswerOver } from "./answer-over.js";
export type {
  PluginSdk,
  PluginTools,
  ToolCaller,
  ActorBoundSdk,
  SeamProvider,
  ToolListing,
  GateCall,
  GateDecision,
  GateHandler,
  HookCall,
  HookHandler,
  StagedReaction,
  GuardCall,
  GuardDecision,
  GuardHandler,
  SeamContext,
} from "./plugin-sdk.js";
