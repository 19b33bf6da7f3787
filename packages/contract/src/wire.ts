/**
 * `@toolpact/contract/wire`: what travels between a caller and a toolpact server (errors and their wire
 * format, the protocol types, `ToolTransport`), with no dependencies, so a caller's client loads none of
 * the manifest loader or the validators.
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
export { toolRefOf } from "./protocol.js";
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
} from "./protocol.js";
export type { Effect } from "./manifest.js";
