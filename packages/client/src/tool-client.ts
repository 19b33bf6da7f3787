import type { Effect, ExecuteOptions, ExecuteResult, PreviewOptions, ToolRef } from "@toolpact/protocol";
import { ToolpactError } from "@toolpact/protocol";
import { confirmPreview, type ConfirmOptions, type ConfirmPreviewOptions } from "./confirm.js";
import type { ConfirmationToken, ToolPreview } from "./confirmation-token.js";
import { toToolpactError } from "./error-wire.js";
import type { ToolTransport } from "./transport.js";

/** What generated code knows about one tool version: the `as const` descriptor it emits. */
export interface ToolDescriptor<TName extends string = string> {
  readonly providerId: string;
  readonly name: string;
  readonly version: number;
  /** `<pluginId>:<name>@<version>`. */
  readonly fullName: TName;
  readonly effect: Effect;
  readonly requiresConfirmation: boolean;
}

/** Execute options of a tool whose manifest does not require confirmation: a token is optional. */
export interface ExecuteCallOptions<TName extends string> {
  /** Policy or a gate may still demand one at run time: pass what this tool's `confirm` returned. */
  readonly confirmationToken?: ConfirmationToken<TName> | undefined;
  /** Same key and input: the recorded outcome comes back instead of a second effect. */
  readonly idempotencyKey?: string;
  readonly runId?: string;
}

/** Execute options of a tool whose manifest requires confirmation: the token of this very tool is required. */
export interface ConfirmedExecuteOptions<TName extends string> {
  /** What this tool's `confirm` returned for a preview of the same input. */
  readonly confirmationToken: ConfirmationToken<TName>;
  /** Same key and input: the recorded outcome comes back instead of a second effect. */
  readonly idempotencyKey?: string;
  readonly runId?: string;
}

/** The typed client of a tool whose manifest does not require confirmation. */
export interface ToolClient<TName extends string, TInput, TOutput> {
  /** Asks the provider what the call would do; the answer says whether a confirmation is needed. */
  preview(input: TInput, options?: PreviewOptions): Promise<ToolPreview<TName>>;
  /** This tool's confirmation token for the preview, or undefined when the preview needs none. */
  confirm(preview: ToolPreview<TName>, options?: ConfirmOptions): Promise<ConfirmationToken<TName> | undefined>;
  /** Runs the tool; a token is optional (policy may still demand one: preview and confirm first then). */
  execute(input: TInput, options?: ExecuteCallOptions<TName>): Promise<ExecuteResult<TOutput>>;
}

/** The typed client of a tool whose manifest requires confirmation: `execute` needs this tool's token. */
export interface ConfirmedToolClient<TName extends string, TInput, TOutput> {
  /** Asks the provider what the call would do and opens the confirmation the call needs. */
  preview(input: TInput, options?: PreviewOptions): Promise<ToolPreview<TName>>;
  /** This tool's confirmation token: at once in token mode; in platform mode once the user approves. */
  confirm(preview: ToolPreview<TName>, options?: ConfirmOptions): Promise<ConfirmationToken<TName>>;
  /** Runs the tool with the token `confirm` returned for a preview of the same input. */
  execute(input: TInput, options: ConfirmedExecuteOptions<TName>): Promise<ExecuteResult<TOutput>>;
}

/** The typed client of a tool that does not require confirmation (generated code calls this). */
export function createToolMethod<TName extends string, TInput, TOutput>(
  transport: ToolTransport,
  descriptor: ToolDescriptor<TName>,
): ToolClient<TName, TInput, TOutput> {
  const call = createCall(transport, descriptor);
  return Object.freeze({
    preview: call.preview as ToolClient<TName, TInput, TOutput>["preview"],
    confirm: async (preview: ToolPreview<TName>, options?: ConfirmOptions) =>
      (await confirmPreview(transport, preview, confirmOptions(descriptor, options))) as ConfirmationToken<TName> | undefined,
    execute: call.execute as ToolClient<TName, TInput, TOutput>["execute"],
  });
}

/** The typed client of a tool that requires confirmation (generated code calls this). */
export function createConfirmedToolMethod<TName extends string, TInput, TOutput>(
  transport: ToolTransport,
  descriptor: ToolDescriptor<TName>,
): ConfirmedToolClient<TName, TInput, TOutput> {
  const call = createCall(transport, descriptor);
  return Object.freeze({
    preview: call.preview as ConfirmedToolClient<TName, TInput, TOutput>["preview"],
    confirm: async (preview: ToolPreview<TName>, options?: ConfirmOptions) => {
      const token = await confirmPreview(transport, preview, confirmOptions(descriptor, options));
      if (token === undefined) {
        throw new ToolpactError(
          "CONFIRMATION_MISMATCH",
          `the preview of "${descriptor.fullName}" needs no confirmation, but the manifest this client was generated from ` +
            "requires one: the provider's manifest changed; regenerate the client with `toolpact codegen`",
          { tool: descriptor.fullName },
        );
      }
      return token as ConfirmationToken<TName>;
    },
    execute: call.execute as ConfirmedToolClient<TName, TInput, TOutput>["execute"],
  });
}

interface ToolCall {
  preview(input: unknown, options?: PreviewOptions): Promise<unknown>;
  execute(input: unknown, options?: ExecuteCallOptions<string>): Promise<ExecuteResult>;
}

/** Preview and execute over the transport, with the tool reference built once. */
function createCall(transport: ToolTransport, descriptor: ToolDescriptor): ToolCall {
  const ref: ToolRef = Object.freeze({ providerId: descriptor.providerId, tool: descriptor.name, version: descriptor.version });
  return {
    async preview(input, options) {
      try {
        return await transport.preview(ref, input, options?.runId === undefined ? undefined : { runId: options.runId });
      } catch (error) {
        throw toToolpactError(error);
      }
    },
    async execute(input, options) {
      try {
        return await transport.execute(ref, input, executeOptions(options));
      } catch (error) {
        throw toToolpactError(error);
      }
    },
  };
}

/** The transport's options without undefined members. */
function executeOptions(options: ExecuteCallOptions<string> | undefined): ExecuteOptions | undefined {
  if (options === undefined) return undefined;
  const out: { confirmationToken?: string; idempotencyKey?: string; runId?: string } = {};
  if (options.confirmationToken !== undefined) out.confirmationToken = options.confirmationToken;
  if (options.idempotencyKey !== undefined) out.idempotencyKey = options.idempotencyKey;
  if (options.runId !== undefined) out.runId = options.runId;
  return out;
}

function confirmOptions(descriptor: ToolDescriptor, options: ConfirmOptions | undefined): ConfirmPreviewOptions {
  return options === undefined ? { tool: descriptor.fullName } : { ...options, tool: descriptor.fullName };
}
