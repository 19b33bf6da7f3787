import type { ConfirmationStatus, PreviewResult } from "@toolpact/protocol";
import { ToolpactError, type ToolpactErrorData } from "@toolpact/protocol";
import { toToolpactError } from "./error-wire.js";
import type { ToolTransport } from "./transport.js";

/** What the caller's code needs to bring a platform-mode confirmation request to the user. */
export interface ConfirmationRequired {
  /** The runtime's confirmation page for this request: show it, open it, or send it to the user. */
  readonly confirmUrl: string;
  /** When the request expires (ISO 8601): a decision after this is too late, and `confirm` rejects. */
  readonly expiresAt: string;
  /** The request's id (for `confirmations.cancel`, logs and support). */
  readonly requestId: string;
  /** The tool's full name, when the caller is a generated tool client. */
  readonly tool?: string;
}

/** Options of a tool's `confirm`. */
export interface ConfirmOptions {
  /** Stops waiting for the user's decision (platform mode); the request itself stays open until it expires. */
  readonly signal?: AbortSignal;
  /**
   * Called once, before `confirm` starts waiting, when the preview needs the user's decision on the
   * platform's confirmation page (platform mode): hand `confirmUrl` to the user. `confirm` waits for
   * what it returns; if it throws, `confirm` rejects with that error and waits no longer.
   * Never called in token mode or when no confirmation is needed.
   * @example
   * const token = await tools.notes.createRecord.confirm(preview, {
   *   onConfirmationRequired: ({ confirmUrl, expiresAt }) => chat.say(`Please approve by ${expiresAt}: ${confirmUrl}`),
   * });
   */
  readonly onConfirmationRequired?: (request: ConfirmationRequired) => void | Promise<void>;
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
 * platform mode it hands the confirmation page to `onConfirmationRequired`, then waits (long-poll rounds
 * of `transport.waitForConfirmation`) until the user approves, and rejects with CONFIRMATION_DENIED
 * (denied or cancelled) or CONFIRMATION_EXPIRED (nobody decided in time).
 * Resolves undefined when the preview needs no confirmation.
 */
export async function confirmPreview(transport: ToolTransport, preview: PreviewResult, options: ConfirmPreviewOptions = {}): Promise<string | undefined> {
  const { confirmation } = preview;
  if (!confirmation.required) return undefined;
  if (confirmation.mode === "token") return confirmation.token;

  const { requestId, confirmUrl, expiresAt } = confirmation;
  const tool = options.tool ?? "the tool";
  const data = options.tool === undefined ? { requestId } : { requestId, tool: options.tool };
  const signal = options.signal;
  const waitOptions = signal ? { signal } : undefined;
  signal?.throwIfAborted();
  if (options.onConfirmationRequired) {
    const request: ConfirmationRequired = { confirmUrl, expiresAt, requestId, ...(options.tool === undefined ? {} : { tool: options.tool }) };
    await options.onConfirmationRequired(Object.freeze(request));
  }
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
        if (Date.now() > Date.parse(status.expiresAt) + PENDING_GRACE_MS) throw expired(tool, status.expiresAt, data);
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
        throw expired(tool, expiresAt, data);
      default:
        throw new ToolpactError(
          "CONFIRMATION_INVALID",
          `confirmation request ${requestId} for ${tool} has a status this client does not know (${JSON.stringify((status as { status?: unknown }).status)}): update @toolpact/client`,
          data,
        );
    }
  }
}

function expired(tool: string, expiresAt: string, data: ToolpactErrorData & { readonly requestId: string }): ToolpactError {
  return new ToolpactError(
    "CONFIRMATION_EXPIRED",
    `confirmation request ${data.requestId} for ${tool} expired: nobody approved or denied it before ${expiresAt}, so nothing ran. ` +
      "Preview again for a new request and bring its confirmUrl to the user (confirm's onConfirmationRequired gets it)",
    data,
  );
}
