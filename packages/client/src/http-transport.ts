import { createTRPCClient, httpLink, type HTTPHeaders } from "@trpc/client";
import {
  toToolpactError,
  toolRefOf,
  type ExecuteOptions,
  type ExecuteResult,
  type PreviewOptions,
  type PreviewResult,
  type ToolRef,
  type ToolTransport,
} from "@toolpact/protocol";
// Type-only: the procedures' names and inputs are checked against the server's router at compile time
// (a renamed procedure does not compile); nothing of the server is loaded, and the public declarations
// below name only ToolTransport, so consumers never need the server's types.
import type { AppRouter } from "@toolpact/server";

/**
 * A `fetch` (the global one, undici's, ...). Declared here rather than taken from tRPC's types, which
 * need the DOM lib: a caller's `tsc` without it must accept this package's declarations.
 */
type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
type TrpcFetch = NonNullable<Parameters<typeof httpLink>[0]["fetch"]>;

/** Options of `createHttpTransport`. */
export interface HttpTransportOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:4400`; the transport calls `<url>/trpc`. */
  readonly url: string | URL;
  /** This caller plugin's key, sent as `Authorization: Bearer <key>`. */
  readonly pluginKey: string;
  /** The actor token (sent as `X-Toolpact-Actor`), or a function giving a fresh one for each request. */
  readonly actorToken: string | (() => string | Promise<string>);
  /** Applies to every preview and execute that does not name its own run. */
  readonly runId?: string;
  /**
   * A `fetch` to use instead of the global one. It must let a response take at least 30 s:
   * `waitForConfirmation` is a long poll the server holds for up to ~25 s (Node's global fetch allows 300 s).
   */
  readonly fetch?: FetchLike;
}

/**
 * A `ToolTransport` over the server's tRPC API (one HTTP request per call, no batching).
 * Every rejection is a `ToolpactError` (`toToolpactError`): the server's code and data, or
 * OUTCOME_UNKNOWN for failures without a toolpact code (network errors, internal server errors).
 * @example
 * const transport = createHttpTransport({ url: "http://127.0.0.1:4400", pluginKey, actorToken });
 */
export function createHttpTransport(options: HttpTransportOptions): ToolTransport {
  const authorization = `Bearer ${options.pluginKey}`;
  const token = options.actorToken;
  const headers: HTTPHeaders | (() => Promise<HTTPHeaders>) =
    typeof token === "string"
      ? { authorization, "x-toolpact-actor": token }
      : async () => ({ authorization, "x-toolpact-actor": await token() });
  const client = createTRPCClient<AppRouter>({
    // tRPC's fetch type differs from FetchLike only in spelling an absent signal `undefined` rather than `null`.
    links: [httpLink({ url: trpcUrl(options.url), headers, ...(options.fetch ? { fetch: options.fetch as TrpcFetch } : {}) })],
  });
  const { tools, confirmations } = client;
  const defaultRunId = options.runId;

  return {
    preview: (ref: ToolRef, input: unknown, opts?: PreviewOptions) =>
      call<PreviewResult>(tools.preview.mutate({ ref: toolRefOf(ref), input, runId: opts?.runId ?? defaultRunId })),
    execute: (ref: ToolRef, input: unknown, opts?: ExecuteOptions) =>
      call<ExecuteResult>(
        tools.execute.mutate({
          ref: toolRefOf(ref),
          input,
          runId: opts?.runId ?? defaultRunId,
          confirmationToken: opts?.confirmationToken,
          idempotencyKey: opts?.idempotencyKey,
        }),
      ),
    // One long-poll round (`confirmations.wait`, a query): the server answers on a decision or after ~25 s.
    waitForConfirmation: async (requestId: string, opts?: { readonly signal?: AbortSignal }) => {
      try {
        return await confirmations.wait.query({ requestId }, opts?.signal ? { signal: opts.signal } : {});
      } catch (error) {
        // Stopped by the caller: reject with its reason, as `confirm()` expects, not as a failed call.
        if (opts?.signal?.aborted) throw opts.signal.reason;
        throw toToolpactError(error);
      }
    },
  };
}

/**
 * The answer, or the ToolpactError of its failure. Over JSON a property whose value was undefined arrives
 * absent (the router's inferred output marks `details` and `result` optional): it reads the same.
 */
async function call<T>(request: Promise<Partial<T>>): Promise<T> {
  try {
    return (await request) as T;
  } catch (error) {
    throw toToolpactError(error);
  }
}

function trpcUrl(base: string | URL): string {
  const text = String(base).replace(/\/+$/, "");
  return text.endsWith("/trpc") ? text : `${text}/trpc`;
}
