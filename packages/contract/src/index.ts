// The wire contract (errors, protocol types, limits) lives in @toolpact/protocol, which has no
// dependencies so that a caller's client does not install the manifest tooling; it is re-exported here.
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
} from "@toolpact/protocol";
export {
  PLUGIN_ID_PATTERN,
  PLUGIN_ID_MAX_LENGTH,
  TOOL_NAME_PATTERN,
  TOOL_NAME_MAX_LENGTH,
  RESERVED_TOOL_NAMES,
  camelCase,
  pascalCase,
  pluginClientName,
  toolFullName,
  parseToolFullName,
  matchesToolPattern,
} from "./names.js";
export {
  PERMISSIONS,
  RECOVERY_CAPABILITIES,
  DEFAULT_TOOL_TIMEOUT_MS,
  manifestSchema,
  toolDeclarationSchema,
  gateDeclarationSchema,
  hookDeclarationSchema,
  guardDeclarationSchema,
  applyManifestDefaults,
  type Permission,
  type RecoveryCapability,
  type Manifest,
  type ManifestInput,
  type ToolDeclaration,
  type GateDeclaration,
  type HookDeclaration,
  type GuardDeclaration,
} from "./manifest.js";
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
} from "@toolpact/protocol";
export { EFFECTS, toolRefOf, type Effect } from "@toolpact/protocol";
export { toToolpactError, type ToolpactErrorWire } from "@toolpact/protocol";
export {
  DEFAULT_INPUT_LIMITS,
  DEFAULT_OUTPUT_LIMITS,
  prepareInput,
  prepareOutput,
  canonicalJson,
  inputDigest,
  schemaHash,
  type InputLimits,
} from "./input.js";
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
  RECOVERY_ATTEMPTS_MAX,
  MAX_VERIFICATION_LEVEL,
  CONFIRMATION_TTL_MIN_SECONDS,
  CONFIRMATION_TTL_MAX_SECONDS,
} from "@toolpact/protocol";
export { withoutUndefined, type WithoutUndefined } from "./without-undefined.js";
export { compileSchema, schemaDialect, type SchemaValidator, type SchemaDialect } from "./validation.js";
export {
  parseManifest,
  loadManifest,
  loadManifestOrThrow,
  formatDiagnostic,
  type Diagnostic,
  type ManifestLoadResult,
} from "./loader.js";
export { manifestJsonSchema } from "./manifest-json-schema.js";
export { closestMatch, didYouMean } from "./hints.js";
