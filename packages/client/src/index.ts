export type { ToolTransport } from "./transport.js";
export { createHttpTransport, type HttpTransportOptions } from "./http-transport.js";
export type { ConfirmationToken, ToolPreview } from "./confirmation-token.js";
export { confirmPreview, type ConfirmOptions, type ConfirmPreviewOptions, type ConfirmationRequired } from "./confirm.js";
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
// From the wire entry only: importing the client loads neither the manifest loader nor the validators.
export {
  ProviderOutcomeUnknown,
  ProviderBusy,
  ProviderRefusal,
  ToolpactError,
  isToolpactError,
  isToolpactErrorCode,
  type ToolpactErrorCode,
  type ToolpactErrorData,
  type ValidationIssue,
} from "@toolpact/protocol";
export type {
  Effect,
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
} from "@toolpact/protocol";
export type {
  PluginSdk,
  PluginTools,
  ToolCaller,
  ActorBoundSdk,
  SeamProvider,
  ToolListing,
  GateHandler,
  HookHandler,
  GuardHandler,
  SeamContext,
  GateCall,
  GateDecision,
  HookCall,
  StagedReaction,
  GuardCall,
  GuardDecision,
} from "@toolpact/protocol";
