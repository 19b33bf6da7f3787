// The wire contract (errors, protocol types, limits, the plugin SDK's types) lives in @toolpact/protocol,
// which has no dependencies so that a caller's client does not install the manifest tooling; all of it
// is re-exported here.
export * from "@toolpact/protocol";
export {
  PLUGIN_ID_PATTERN,
  PLUGIN_ID_MAX_LENGTH,
  TOOL_NAME_PATTERN,
  TOOL_NAME_MAX_LENGTH,
  TOOL_PATTERN,
  SEAM_KEY_PATTERN,
  POSTGRES_SCHEMA_NAME_PATTERN,
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
  ISOLATION_MODES,
  DEFAULT_UPSTREAM_MAX_IN_FLIGHT,
  UPSTREAM_TOOL_NAME_PATTERN,
  DEFAULT_ISOLATED_MEMORY_MB,
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
  type IsolationMode,
  type UpstreamDeclaration,
  type StdioUpstreamDeclaration,
  type HttpUpstreamDeclaration,
  type ProcessIsolationDeclaration,
} from "./manifest.js";
export {
  DEFAULT_INPUT_LIMITS,
  DEFAULT_OUTPUT_LIMITS,
  prepareInput,
  prepareOutput,
  type InputLimits,
} from "./input.js";
export { canonicalJson, inputDigest, schemaHash } from "./canonical-json.js";
export {
  compareUpstreamTools,
  describeToolDrift,
  type LiveTool,
  type SchemaChange,
  type ToolDrift,
  type UpstreamDrift,
} from "./schema-drift.js";
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
