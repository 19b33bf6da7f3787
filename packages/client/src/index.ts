export type { ToolTransport } from "./transport.js";
export { createHttpTransport, type HttpTransportOptions } from "./http-transport.js";
export type { ConfirmationToken, ToolPreview } from "./confirmation-token.js";
export { confirmPreview, type ConfirmOptions, type ConfirmPreviewOptions } from "./confirm.js";
export { toToolpactError, type ToolpactErrorWire } from "./error-wire.js";
export {
  createToolMethod,
  createConfirmedToolMethod,
  type ToolDescriptor,
  type ToolClient,
  type ConfirmedToolClient,
  type ExecuteCallOptions,
  type ConfirmedExecuteOptions,
} from "./tool-client.js";
export { defineProvider } from "./provider.js";
export {
  ToolpactError,
  isToolpactError,
  isToolpactErrorCode,
  type ToolpactErrorCode,
  type ToolpactErrorData,
  type ValidationIssue,
  type Effect,
  type ToolRef,
  type ConfirmationInfo,
  type ConfirmationStatus,
  type PreviewSummary,
  type PreviewResult,
  type ExecuteResult,
  type PreviewOptions,
  type ExecuteOptions,
  type ActorInfo,
  type ToolCallContext,
  type ToolExecuteContext,
  type AuthorizeDecision,
  type ToolHandler,
  type TargetedResult,
  type ProviderDefinition,
} from "@toolpact/contract";
