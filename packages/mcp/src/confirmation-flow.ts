/**
 * Getting a platform-mode approval to an MCP client's user: URL-mode elicitation pointing at toolpact's
 * confirmation page while the bridge waits for the decision, or, for a client that cannot be asked
 * (no URL elicitation declared, or no channel back: stateless HTTP), the URL-elicitation-required error
 * (-32042) carrying the page's URL, after which the client calls again.
 */
import {
  UrlElicitationRequiredError,
  type CallToolResult,
  type ElicitRequestURLParams,
  type ElicitResult,
  type Notification,
  type ProgressToken,
} from "@modelcontextprotocol/server";
import { MAX_CONFIRMATION_WAIT_MS, type Logger, type ToolListing } from "@toolpact/runtime";
import { isToolpactError, type ConfirmationInfo, type ConfirmationStatus } from "@toolpact/contract";
import type { ToolBackend } from "./tool-backend.js";
import type { RequestStateCodec } from "./request-state.js";
import { REQUEST_META_KEY, errorResult } from "./tool-results.js";

/** A platform-mode confirmation request, as preview opened it. */
export type PlatformConfirmation = Extract<ConfirmationInfo, { mode: "platform" }>;

/** What a `tools/call` handler can do towards the client that called. */
export interface CallChannel {
  /** Aborts when the client cancels the call (`notifications/cancelled`), hangs up, or the server stops; the reason says which. */
  readonly signal: AbortSignal;
  /** The call's `_meta.progressToken`, when the client asked for progress. */
  readonly progressToken?: ProgressToken;
  /** The protocol era of the call: `modern` (2026-07-28) answers with `input_required` instead of asking during the call. */
  readonly era: "legacy" | "modern";
  /**
   * Legacy: the client declared URL elicitation and can answer a request on this call (not stateless HTTP).
   * Modern: the request's envelope declares URL input, so an `input_required` URL request may be returned.
   */
  readonly urlElicitation: boolean;
  /** Modern: the `requestState` the client echoed on this retry, as sent. */
  readonly requestState: string | undefined;
  /** Modern: what the client answered to the approval's URL input request on this retry, if it answered. */
  readonly approvalAnswer: "accept" | "decline" | "cancel" | undefined;
  readonly stateCodec: RequestStateCodec;
  notify(notification: Notification): Promise<void>;
  elicitUrl(params: ElicitRequestURLParams, options: { readonly signal: AbortSignal; readonly timeout: number }): Promise<ElicitResult>;
}

/** How long one wait round lasts (and so how often progress is reported), ms. */
export const DEFAULT_WAIT_ROUND_MS = 10_000;

/** Options of `awaitApproval`. */
export interface ApprovalOptions {
  readonly backend: ToolBackend;
  readonly tool: ToolListing;
  readonly channel: CallChannel;
  readonly waitRoundMs: number;
  readonly logger: Logger;
}

/** The token of an approved request, or the result that says nothing ran and why. */
export type ApprovalOutcome = { readonly approved: true; readonly token: string } | { readonly approved: false; readonly result: CallToolResult };

/**
 * Waits for the user's decision on a platform-mode request. With URL elicitation: asks the client to
 * show the confirmation page (the request's id is the `elicitationId`), reports progress while waiting,
 * and withdraws the request when the client declines, cancels the call or hangs up. Without: answers at
 * once: approved, refused, or (still pending) throws the URL-elicitation-required error.
 * @throws UrlElicitationRequiredError when the client has to open the page itself and call again.
 */
export async function awaitApproval(request: PlatformConfirmation, options: ApprovalOptions): Promise<ApprovalOutcome> {
  return options.channel.urlElicitation ? askAndWait(request, options) : answerOrPointToPage(request, options);
}

/** Without a way to ask: the decision if there is one, else the URL-elicitation-required error. */
async function answerOrPointToPage(request: PlatformConfirmation, { backend, tool }: ApprovalOptions): Promise<ApprovalOutcome> {
  const status = await backend.waitConfirmation(request.requestId, { timeoutMs: 0 });
  if (status.status !== "pending") return outcomeOf(status, request, tool);
  throw new UrlElicitationRequiredError(
    [{ mode: "url", elicitationId: request.requestId, url: request.confirmUrl, message: approvalMessage(tool) }],
    `${tool.fullName} needs the user's approval: open ${request.confirmUrl}, approve, then make the same call again`,
  );
}

/** Asks the client to show the page, and waits in rounds (reporting progress) until the request is decided. */
async function askAndWait(request: PlatformConfirmation, options: ApprovalOptions): Promise<ApprovalOutcome> {
  const { backend, tool, channel } = options;
  const elicitation = elicitApproval(request, options);
  const waiting = AbortSignal.any([channel.signal, elicitation.declined]);
  const started = performance.now();
  let status: ConfirmationStatus | undefined;
  try {
    await reportProgress(channel, started);
    for (;;) {
      status = await backend.waitConfirmation(request.requestId, { timeoutMs: Math.min(options.waitRoundMs, MAX_CONFIRMATION_WAIT_MS), signal: waiting });
      if (status.status !== "pending" || waiting.aborted) break;
      await reportProgress(channel, started);
    }
  } catch (error) {
    if (!waiting.aborted) {
      await withdraw(backend, request, options.logger);
      throw error;
    }
  } finally {
    elicitation.finish();
  }
  // A call the client gave up on never runs, even if the user approved just now.
  if (channel.signal.aborted || status === undefined || status.status === "pending") {
    await withdraw(backend, request, options.logger);
    const why = channel.signal.aborted ? abortReason(channel.signal) : (elicitation.refusal() ?? "the wait ended");
    return refused("CONFIRMATION_DENIED", `${why}: the confirmation request for ${tool.fullName} was withdrawn; nothing ran`, request);
  }
  await channel.notify({ method: "notifications/elicitation/complete", params: { elicitationId: request.requestId } }).catch(() => {});
  return outcomeOf(status, request, tool);
}

/**
 * Sends the URL elicitation. `declined` aborts when the client declines, dismisses or fails it (then
 * `refusal` says which); `finish` withdraws the elicitation if the client has not answered yet.
 */
function elicitApproval(request: PlatformConfirmation, { tool, channel }: ApprovalOptions) {
  const finished = new AbortController();
  const declined = new AbortController();
  let refusal: string | undefined;
  const decline = (why: string) => {
    refusal = why;
    declined.abort();
  };
  void channel
    .elicitUrl(
      { mode: "url", elicitationId: request.requestId, url: request.confirmUrl, message: approvalMessage(tool) },
      { signal: AbortSignal.any([channel.signal, finished.signal]), timeout: Math.max(1_000, Date.parse(request.expiresAt) - Date.now()) + 5_000 },
    )
    .then(
      (answer) => {
        if (answer.action === "decline") decline("the user declined to open the confirmation page");
        if (answer.action === "cancel") decline("the user dismissed the confirmation request");
      },
      (error: unknown) => {
        if (finished.signal.aborted || channel.signal.aborted) return;
        decline(`the client could not show the confirmation page (${(error as Error)?.message ?? String(error)})`);
      },
    );
  return { declined: declined.signal, refusal: () => refusal, finish: () => finished.abort() };
}

/** Why a call was stopped: the client cancelled it (`notifications/cancelled`, with its reason), hung up, or the server stops. */
function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name !== "AbortError") return reason.message;
  return typeof reason === "string" && reason !== "" ? `the client cancelled the call (${reason.slice(0, 200)})` : "the client cancelled the call";
}

/** What the client shows next to the link (MCP: the message itself carries no URL). */
export function approvalMessage(tool: ToolListing): string {
  return `Approve or deny "${tool.title ?? tool.fullName}" on toolpact's confirmation page. Nothing runs until you approve it there.`;
}

/** The outcome of a decided request: its token, or the result that says nothing ran and why. */
export function outcomeOf(
  status: Exclude<ConfirmationStatus, { status: "pending" }>,
  request: Pick<PlatformConfirmation, "requestId">,
  tool: ToolListing,
): ApprovalOutcome {
  switch (status.status) {
    case "approved":
      return { approved: true, token: status.token };
    case "denied":
      return refused("CONFIRMATION_DENIED", `the user denied ${tool.fullName} on the confirmation page; nothing ran`, request);
    case "cancelled":
      return refused("CONFIRMATION_DENIED", `the confirmation request for ${tool.fullName} was withdrawn; nothing ran`, request);
    case "expired":
      return refused(
        "CONFIRMATION_EXPIRED",
        `the confirmation request for ${tool.fullName} expired before the user decided; nothing ran: call the tool again to ask again`,
        request,
      );
  }
}

function refused(code: "CONFIRMATION_DENIED" | "CONFIRMATION_EXPIRED", message: string, request: Pick<PlatformConfirmation, "requestId">): ApprovalOutcome {
  return { approved: false, result: errorResult(code, message, { [REQUEST_META_KEY]: request.requestId }) };
}

async function reportProgress(channel: CallChannel, started: number): Promise<void> {
  if (channel.progressToken === undefined) return;
  const seconds = Math.round(performance.now() - started) / 1000;
  await channel
    .notify({
      method: "notifications/progress",
      params: { progressToken: channel.progressToken, progress: seconds, message: "waiting for the user to approve on the confirmation page" },
    })
    .catch(() => {});
}

/** Withdraws a request nobody waits for any more; a request decided meanwhile is left as it is. */
export async function withdraw(backend: ToolBackend, request: Pick<PlatformConfirmation, "requestId">, logger: Logger): Promise<void> {
  try {
    await backend.cancelConfirmation(request.requestId);
  } catch (error) {
    logger.warn({
      event: "mcp_confirmation_withdraw_failed",
      requestId: request.requestId,
      errorCode: isToolpactError(error) ? error.code : ((error as Error)?.constructor?.name ?? typeof error),
    });
  }
}
