import type {
  ConfirmationStatus,
  ExecuteOptions,
  ExecuteResult,
  PreviewOptions,
  PreviewResult,
  ToolRef,
} from "@toolpact/contract";

/**
 * How generated clients reach a runtime: over HTTP (`createHttpTransport`) or in process.
 * Every method rejects with a `ToolpactError` carrying the runtime's code and data.
 */
export interface ToolTransport {
  preview(ref: ToolRef, input: unknown, options?: PreviewOptions): Promise<PreviewResult>;
  execute(ref: ToolRef, input: unknown, options?: ExecuteOptions): Promise<ExecuteResult>;
  /**
   * One long-poll round on a platform-mode confirmation request: resolves as soon as the request is
   * decided, or with `pending` after the server's wait limit (~25 s); callers loop while pending.
   */
  waitForConfirmation(requestId: string, options?: { readonly signal?: AbortSignal }): Promise<ConfirmationStatus>;
}
