import type { ConfirmationStatus, PreviewResult } from "@toolpact/protocol";
import { ToolpactError, type ToolpactErrorData } from "@toolpact/protocol";
import { toToolpactError } from "./error-wire.js";
import type { ToolTransport } from "./transport.js";

/** Options of a tool's `confirm`. */
export interface ConfirmOptions {
  /** Stops waiting for the user's decision (platform mode); the request itself stays open until it expires. */
  readonly signal?: AbortSignal;
}

/** Options of `confirmPreview`. */
export interface ConfirmPreviewOptions extends ConfirmOptions {
  /** The tool's full name, for error messages. */
  readonly tool?: string;
}

/**
 * A pending request whose expiry passed this long ago (by this machine's clock) is treated as
 * expired even if the server keeps answering "pending", so a misbehaving server cannot hold us forever.
 */
const PENDING_GRACE_MS = 60_000;

/**
 * The confirmation token a preview leads to: in token mode the preview's own token, at once; in
 * platform mode it waits (long-poll rounds of `transport.waitForConfirmation`) until the user
 * approves, and rejects with CONFIRMATION_DENIED (denied or cancelled) or CONFIRMATION_EXPIRED.
 * Resolves undefined when the preview needs no confirmation.
 */
export async function confirmPreview(
  transport: ToolTransport,
  preview: PreviewResult,
  options: ConfirmPreviewOptions = {},
): Promise<string | undefined> {
  const { confirmation } = preview;
  if (!confirmation.required) return undefined;
  if (confirmation.mode === "token") return confirmation.token;

  const { requestId } = confirmation;
  const tool = options.tool ?? "the tool";
  const data = options.tool === undefined ? { requestId } : { requestId, tool: options.tool };
  const signal = options.signal;
  const waitOptions = signal ? { signal } : undefined;
  for (;;) {
    signal?.throwIfAborted();
    let status: ConfirmationStatus;
    try {
      status = await transport.waitForConfirmation(requestId, waitOptions);
    } catch (error) {
      // The caller stopped waiting: they get their own reason, whatever the transport made of the abort.
      if (signal?.aborted) throw signal.reason;
      throw toToolpactError(error);
    }
    switch (status.status) {
      case "approved":
        return status.token;
      case "pending":
        if (Date.now() > Date.parse(status.expiresAt) + PENDING_GRACE_MS) throw expired(tool, requestId, data);
        continue;
      case "denied":
        throw new ToolpactError(
          "CONFIRMATION_DENIED",
          `the user denied confirmation request ${requestId} for ${tool}; nothing ran: preview again if the user should decide once more`,
          data,
        );
      case "cancelled":
        throw new ToolpactError(
          "CONFIRMATION_DENIED",
          `confirmation request ${requestId} for ${tool} was cancelled; nothing ran: preview again to ask the user anew`,
          data,
        );
      case "expired":
        throw expired(tool, requestId, data);
      default:
        throw new ToolpactError(
          "CONFIRMATION_INVALID",
          `confirmation request ${requestId} for ${tool} has a status this client does not know (${JSON.stringify((status as { status?: unknown }).status)}): update @toolpact/client`,
          data,
        );
    }
  }
}

function expired(tool: string, requestId: string, data: ToolpactErrorData): ToolpactError {
  return new ToolpactError(
    "CONFIRMATION_EXPIRED",
    `confirmation request ${requestId} for ${tool} expired before the user decided; nothing ran: preview again`,
    data,
  );
}
