import type { PreviewResult } from "@toolpact/protocol";

declare const confirmationTokenBrand: unique symbol;
declare const toolPreviewBrand: unique symbol;

/**
 * A confirmation token for one tool: a string at run time, but only that tool's `confirm` returns
 * one, so a plain string or another tool's token does not type-check where this one is required.
 */
export type ConfirmationToken<TName extends string> = string & { readonly [confirmationTokenBrand]: TName };

/** A preview of one tool (`<pluginId>:<name>@<version>`); only that tool's `confirm` takes it. */
export interface ToolPreview<TName extends string> extends PreviewResult {
  readonly [toolPreviewBrand]: TName;
}
