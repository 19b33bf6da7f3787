/**
 * `tools/call`, top to bottom: resolve the MCP name in this caller's listing; execute at once a call that
 * needs no confirmation, or one a live user grant may cover; when the runtime answers
 * CONFIRMATION_REQUIRED (or the tool declares confirmation and no grant may cover it), preview, get the
 * user's approval (platform mode only), and execute once with the token.
 */
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type InputRequiredResult } from "@modelcontextprotocol/server";
import { ToolpactError, isToolpactError, type ExecuteOptions, type ExecuteResult, type ToolRef } from "@toolpact/contract";
import type { Logger, ToolListing } from "@toolpact/runtime";
import { awaitApproval, type CallChannel } from "./confirmation-flow.js";
import { firstRound, retryRound, type RetryApproval } from "./input-required-approval.js";
import type { ToolBackend } from "./tool-backend.js";
import { createToolLookup } from "./tool-lookup.js";
import { similarNames } from "./tool-names.js";
import { errorResult, outputResult, refusalResult } from "./tool-results.js";

/** What one `tools/call` works with. */
export interface ToolCall {
  readonly name: string;
  readonly arguments: Record<string, unknown> | undefined;
  readonly backend: ToolBackend;
  readonly channel: CallChannel;
  readonly waitRoundMs: number;
  readonly logger: Logger;
}

/** The idempotency key of the execute an approval leads to: every retry of the approved call shares it. */
export function approvalIdempotencyKey(requestId: string): string {
  return `mcp-approval:${requestId}`;
}

/**
 * Runs one `tools/call`. Toolpact refusals come back as tool errors (`isError`).
 * @throws ProtocolError InvalidParams for a name this caller has no tool by.
 * @throws UrlElicitationRequiredError when a 2025-era client must open the confirmation page and call again.
 */
export async function callTool(call: ToolCall): Promise<CallToolResult | InputRequiredResult> {
  try {
    const tool = await resolveTool(call);
    const ref: ToolRef = { providerId: tool.providerId, tool: tool.name, version: tool.version };
    const input = call.arguments ?? {};
    const state = call.channel.era === "modern" ? call.channel.requestState : undefined;
    // A retry that echoes a state goes straight to the request the state names: no new preview.
    if (state !== undefined)
      return await afterRetryStep(
        call,
        ref,
        input,
        await retryRound(state, { backend: call.backend, tool, ref, input, channel: call.channel, waitRoundMs: call.waitRoundMs, logger: call.logger }),
      );
    // Executed first when the tool does not declare confirmation, or when a live user grant of this user may
    // cover it (the runtime decides; a cheap read, so an uncovered call records no extra refusal). A
    // confirmation still asked for (by the declaration, a rule or a gate) goes the confirmed way.
    if (!tool.requiresConfirmation || (await call.backend.mayBeGranted?.(ref)) === true) {
      try {
        return outputResult(await call.backend.execute(ref, input));
      } catch (error) {
        if (!isToolpactError(error) || error.code !== "CONFIRMATION_REQUIRED") throw error;
      }
    }
    return await confirmThenExecute(call, tool, ref, input);
  } catch (error) {
    if (isToolpactError(error)) return refusalResult(error);
    throw error;
  }
}

async function resolveTool(call: ToolCall): Promise<ToolListing> {
  const tools = createToolLookup(call.backend);
  const tool = await tools.find(call.name);
  if (tool !== undefined) return tool;
  const directory = await tools.directory();
  const similar = similarNames(directory, call.name);
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `unknown tool "${call.name}": no tool by that name is offered to this caller and user` +
      (similar.length > 0 ? `; did you mean ${similar.map((name) => `"${name}"`).join(", ")}?` : ": list them with tools/list"),
  );
}

async function confirmThenExecute(call: ToolCall, tool: ToolListing, ref: ToolRef, input: unknown): Promise<CallToolResult | InputRequiredResult> {
  const { backend } = call;
  const { confirmation } = await backend.preview(ref, input);
  if (!confirmation.required) return outputResult(await backend.execute(ref, input));
  if (confirmation.mode === "token") {
    // The token is dropped unused: an MCP client is never the UI a user confirms in.
    return errorResult(
      "PERMISSION_DENIED",
      `${tool.fullName} would be confirmed by the calling plugin itself (token mode: the tenant's policy names it a trusted ` +
        "confirmation UI), and MCP clients are never trusted to confirm; nothing ran: the tenant admin can give the agent a plugin " +
        'key of its own that is not in trustedConfirmationUis, or set mode: "platform" on the policy rule for this tool',
    );
  }
  if (call.channel.era === "modern") {
    const approval: RetryApproval = { backend, tool, ref, input, channel: call.channel, waitRoundMs: call.waitRoundMs, logger: call.logger };
    return afterRetryStep(call, ref, input, await firstRound(confirmation, approval));
  }
  const approval = await awaitApproval(confirmation, { backend, tool, channel: call.channel, waitRoundMs: call.waitRoundMs, logger: call.logger });
  if (!approval.approved) return approval.result;
  const options: ExecuteOptions = { confirmationToken: approval.token, idempotencyKey: approvalIdempotencyKey(confirmation.requestId) };
  return outputResult(await executeOnce(backend, { ref, input, options }, call.channel.signal));
}

/** Runs an approved 2026-07-28 call once (under the approval's idempotency key), or answers what the step says. */
async function afterRetryStep(
  call: ToolCall,
  ref: ToolRef,
  input: unknown,
  step: Awaited<ReturnType<typeof retryRound>>,
): Promise<CallToolResult | InputRequiredResult> {
  if (!step.approved) return step.answer;
  const options: ExecuteOptions = { confirmationToken: step.token, idempotencyKey: approvalIdempotencyKey(step.requestId) };
  return outputResult(await executeOnce(call.backend, { ref, input, options }, call.channel.signal));
}

const IN_PROGRESS_FIRST_DELAY_MS = 50;
const IN_PROGRESS_MAX_DELAY_MS = 1_000;
const IN_PROGRESS_GIVE_UP_MS = 120_000;

/**
 * Executes an approved call. Concurrent retries share one idempotency key: one of them runs, the others
 * see OPERATION_IN_PROGRESS, wait, and receive the recorded outcome of that one run.
 */
async function executeOnce(
  backend: ToolBackend,
  call: { readonly ref: ToolRef; readonly input: unknown; readonly options: ExecuteOptions },
  signal: AbortSignal,
): Promise<ExecuteResult> {
  const giveUpAt = performance.now() + IN_PROGRESS_GIVE_UP_MS;
  for (let delay = IN_PROGRESS_FIRST_DELAY_MS; ; delay = Math.min(delay * 2, IN_PROGRESS_MAX_DELAY_MS)) {
    try {
      return await backend.execute(call.ref, call.input, call.options);
    } catch (error) {
      if (!(error instanceof ToolpactError) || error.code !== "OPERATION_IN_PROGRESS") throw error;
      if (signal.aborted || performance.now() + delay > giveUpAt) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
