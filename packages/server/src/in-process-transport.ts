import { TRPCError } from "@trpc/server";
import {
  ToolpactError,
  isToolpactError,
  toToolpactError,
  toolRefOf,
  type ConfirmationStatus,
  type ExecuteOptions,
  type ExecuteResult,
  type PreviewOptions,
  type PreviewResult,
  type ToolRef,
  type ToolTransport,
} from "@toolpact/contract";
import type { Principal, Runtime } from "@toolpact/runtime";
import { describeInternalError, toPublicError } from "./errors.js";
import { silentLogger, type Logger } from "./logger.js";
import { createRouterCaller, type ServerContext } from "./router.js";

/** Options of `createInProcessTransport`: credentials verified like HTTP headers, or a principal source. */
export type InProcessTransportOptions = {
  readonly runtime: Runtime;
  /** Applies to every preview and execute that does not name its own run. */
  readonly runId?: string;
  /** Receives unexpected errors (class and stack frames only). */
  readonly logger?: Logger;
} & ({ readonly pluginKey: string; readonly actorToken: string } | { readonly principal: () => Principal | Promise<Principal> });

/**
 * A `ToolTransport` that calls the router in process (tRPC `createCaller`): the same procedures,
 * input checks and error mapping as HTTP, without a socket.
 */
export function createInProcessTransport(options: InProcessTransportOptions): ToolTransport {
  const { runtime } = options;
  const logger = options.logger ?? silentLogger;
  let authenticate: () => Promise<Principal>;
  if ("principal" in options) {
    const source = options.principal;
    authenticate = async () => source();
  } else {
    const credentials = { pluginKey: options.pluginKey, actorToken: options.actorToken };
    authenticate = () => runtime.authenticate(credentials);
  }
  const context: ServerContext = {
    runtime,
    authenticate,
    authorizeAdmin: () => false,
    presence: () =>
      Promise.reject(
        new ToolpactError(
          "UNAUTHENTICATED",
          "approve and deny are only for a person on the confirmation page (its session cookie and CSRF token), never for a plugin's transport",
        ),
      ),
    shutdown: new AbortController().signal,
  };
  const caller = createRouterCaller(context);
  const defaultRunId = options.runId;

  const call = async <T>(invoke: () => Promise<T>): Promise<T> => {
    try {
      return await invoke();
    } catch (error) {
      throw toCallerError(error, logger);
    }
  };

  return {
    preview: (ref: ToolRef, input: unknown, opts?: PreviewOptions): Promise<PreviewResult> =>
      call(() => caller.tools.preview({ ref: toolRefOf(ref), input, runId: opts?.runId ?? defaultRunId })),
    execute: (ref: ToolRef, input: unknown, opts?: ExecuteOptions): Promise<ExecuteResult> =>
      call(() =>
        caller.tools.execute({
          ref: toolRefOf(ref),
          input,
          runId: opts?.runId ?? defaultRunId,
          confirmationToken: opts?.confirmationToken,
          idempotencyKey: opts?.idempotencyKey,
        }),
      ),
    waitForConfirmation: async (requestId: string, opts?: { readonly signal?: AbortSignal }): Promise<ConfirmationStatus> => {
      const signal = opts?.signal;
      if (signal === undefined) return call(() => caller.confirmations.wait({ requestId }));
      signal.throwIfAborted();
      // The signal reaches the procedure through a caller made for this one wait; the runtime then ends
      // the round early, and the transport rejects with the signal's reason as the HTTP transport does.
      const status = await call(() => createRouterCaller(context, { signal }).confirmations.wait({ requestId }));
      signal.throwIfAborted();
      return status;
    },
  };
}

/**
 * What a caller in process sees: the same ToolpactError an HTTP caller gets. A toolpact code keeps its
 * message and data; anything else crosses the same boundary (`toPublicError`, generic message) and
 * becomes what the HTTP transport makes of such an answer (`toToolpactError`).
 */
function toCallerError(error: unknown, logger: Logger): ToolpactError {
  if (isToolpactError(error)) return error;
  if (error instanceof TRPCError && isToolpactError(error.cause)) return error.cause;
  const pub = toPublicError(error);
  if (pub.toolpactCode !== undefined) return new ToolpactError(pub.toolpactCode, pub.message, pub.toolpactData ?? {});
  if (pub.internal) logger.error({ event: "in_process_call_failed_unexpectedly", ...describeInternalError(error) });
  return toToolpactError(new Error(pub.message));
}
