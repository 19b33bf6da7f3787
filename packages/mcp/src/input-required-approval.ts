/**
 * Approval on the 2026-07-28 revision, where a server cannot ask the client during a call: the first call
 * answers `input_required` with one URL-mode input request (toolpact's confirmation page) and a
 * `requestState`; each retry that echoes the state finds the request again: still pending, `input_required`
 * once more; approved, the call runs (once, however many retries arrive); denied or expired, nothing ran.
 * A client that declared no URL input gets a tool error with the page's URL and the retry rule instead.
 */
import { inputRequired, type CallToolResult, type InputRequiredResult } from "@modelcontextprotocol/server";
import type { ToolRef } from "@toolpact/contract";
import { MAX_CONFIRMATION_WAIT_MS, type Logger, type ToolListing } from "@toolpact/runtime";
import { approvalMessage, outcomeOf, withdraw, type ApprovalOutcome, type CallChannel, type PlatformConfirmation } from "./confirmation-flow.js";
import type { StateCall } from "./request-state.js";
import type { ToolBackend } from "./tool-backend.js";
import { REQUEST_META_KEY, errorResult } from "./tool-results.js";

/** The key of the one input request an approval returns (the client answers it after the page closes). */
export const APPROVAL_INPUT_KEY = "toolpact_approval";

/** What the approval of one 2026-07-28 call works with. */
export interface RetryApproval {
  readonly backend: ToolBackend;
  readonly tool: ToolListing;
  readonly ref: ToolRef;
  readonly input: unknown;
  readonly channel: CallChannel;
  /** How long a retry whose client answered "accept" waits for the user's decision, ms. */
  readonly waitRoundMs: number;
  readonly logger: Logger;
}

/** What a 2026-07-28 approval step gave: go on and execute, or answer the client now. */
export type RetryStep =
  | { readonly approved: true; readonly token: string; readonly requestId: string }
  | { readonly approved: false; readonly answer: CallToolResult | InputRequiredResult };

/**
 * The first round of a call that needs approval: the preview's platform request, as `input_required` for a
 * client with URL input, as a tool error naming the page for one without (after approval there, the same
 * call again runs: the preview finds the approved request).
 */
export async function firstRound(request: PlatformConfirmation, approval: RetryApproval): Promise<RetryStep> {
  const { backend, tool, channel } = approval;
  const status = await backend.waitConfirmation(request.requestId, { timeoutMs: 0 });
  if (status.status !== "pending") return stepOf(outcomeOf(status, request, tool), request.requestId);
  if (!channel.urlElicitation) {
    return {
      approved: false,
      answer: errorResult(
        "CONFIRMATION_REQUIRED",
        `${tool.fullName} needs the user's approval, and this client declared no URL input: let the user open ${request.confirmUrl} ` +
          "and approve, then make the same call again with the same arguments (nothing ran yet; the request expires at " +
          `${request.expiresAt})`,
        { [REQUEST_META_KEY]: request.requestId },
      ),
    };
  }
  return { approved: false, answer: await askForApproval(approval, request) };
}

/** A retry that echoes `state`: the request it names, decided or not. */
export async function retryRound(state: string, approval: RetryApproval): Promise<RetryStep> {
  const { backend, tool, channel, logger } = approval;
  const checked = channel.stateCodec.check(state, await stateCallOf(approval));
  if (!checked.ok) return { approved: false, answer: errorResult(checked.code, checked.reason) };
  // A client that says the user went to the page gets one wait round for the decision before being asked again.
  const timeoutMs = channel.approvalAnswer === "accept" ? Math.min(approval.waitRoundMs, MAX_CONFIRMATION_WAIT_MS) : 0;
  const status = await backend.waitConfirmation(checked.requestId, { timeoutMs, signal: channel.signal });
  if (status.status === "pending" && channel.approvalAnswer !== undefined && channel.approvalAnswer !== "accept") {
    // The user would not open the page: the request is withdrawn, as on a 2025-era connection.
    await withdraw(backend, { requestId: checked.requestId }, logger);
    const why = channel.approvalAnswer === "decline" ? "the user declined to open the confirmation page" : "the user dismissed the confirmation request";
    return {
      approved: false,
      answer: errorResult("CONFIRMATION_DENIED", `${why}: the confirmation request for ${tool.fullName} was withdrawn; nothing ran`, {
        [REQUEST_META_KEY]: checked.requestId,
      }),
    };
  }
  if (status.status === "pending") return { approved: false, answer: approvalInput(tool, checked.confirmUrl, state) };
  return stepOf(outcomeOf(status, { requestId: checked.requestId }, tool), checked.requestId);
}

async function askForApproval(approval: RetryApproval, request: PlatformConfirmation): Promise<InputRequiredResult> {
  return approvalInput(approval.tool, request.confirmUrl, approval.channel.stateCodec.mint(await stateCallOf(approval), request));
}

/** `input_required` with the one URL input request (the confirmation page) and the state to retry with. */
function approvalInput(tool: ToolListing, confirmUrl: string, requestState: string): InputRequiredResult {
  return inputRequired({
    inputRequests: { [APPROVAL_INPUT_KEY]: inputRequired.elicitUrl({ message: approvalMessage(tool), url: confirmUrl }) },
    requestState,
  });
}

async function stateCallOf(approval: RetryApproval): Promise<StateCall> {
  const { ref, tool } = approval;
  return {
    caller: await approval.backend.caller(),
    ref: { providerId: ref.providerId, tool: ref.tool, version: ref.version ?? tool.version },
    input: approval.input,
  };
}

function stepOf(outcome: ApprovalOutcome, requestId: string): RetryStep {
  return outcome.approved ? { approved: true, token: outcome.token, requestId } : { approved: false, answer: outcome.result };
}
