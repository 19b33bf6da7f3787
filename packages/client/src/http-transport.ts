import { createTRPCClient, httpLink, type HTTPHeaders } from "@trpc/client";
import {
  ToolpactError,
  exchangeFailure,
  toolRefOf,
  withToolpactAnswers,
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
// undici's keep-alive pool in Node, the global fetch in browsers (package.json "imports").
import { httpFetch } from "#http-fetch";
import { URL_SETTING, withSendFailures, type WireFetch } from "./http-fetch.js";
import { watchExpiry } from "./actor-token-expiry.js";

/** The operation context key under which a wait names the actor token it checked. */
const ACTOR_TOKEN_CONTEXT = "toolpactActorToken";

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
   * A `fetch` to use instead of the transport's own HTTP client (in Node a keep-alive connection pool on
   * undici, elsewhere the global fetch). It must let a response take at least 30 s: `waitForConfirmation`
   * is a long poll the server holds for up to ~25 s (Node's global fetch allows 300 s).
   */
  readonly fetch?: FetchLike;
}

/**
 * A `ToolTransport` over the server's tRPC API (one HTTP request per call, no batching; in Node over a
 * keep-alive connection pool). The options are checked at once: a missing or malformed one throws
 * REQUEST_NOT_SENT naming it. Every rejection is a `ToolpactError` (`toToolpactError`): the server's code
 * and data; REQUEST_NOT_SENT when the request never left (connection refused, unknown host) or what
 * answered is not toolpact and its status proves nothing ran (a 404 page: a wrong URL); or OUTCOME_UNKNOWN
 * when it may have reached the server and no toolpact answer came back.
 * @example
 * const transport = createHttpTransport({ url: "http://127.0.0.1:4400", pluginKey, actorToken });
 */
export function createHttpTransport(options: HttpTransportOptions): ToolTransport {
  const url = checkOptions(options);
  const authorization = `Bearer ${options.pluginKey}`;
  const token = options.actorToken;
  const actorTokenNow = async (): Promise<string> => (typeof token === "string" ? token : checkActorToken(await token()));
  // A wait names the token it checked (the operation's context), so that the one it watches is the one sent.
  const headers: HTTPHeaders | ((opts: { op: { context: Record<string, unknown> } }) => Promise<HTTPHeaders>) =
    typeof token === "string"
      ? { authorization, "x-toolpact-actor": token }
      : async ({ op }) => {
          const chosen = op.context[ACTOR_TOKEN_CONTEXT];
          return { authorization, "x-toolpact-actor": typeof chosen === "string" ? chosen : checkActorToken(await token()) };
        };
  const fetch = withToolpactAnswers(options.fetch ? withSendFailures(options.fetch as unknown as WireFetch) : httpFetch, URL_SETTING);
  const client = createTRPCClient<AppRouter>({
    // tRPC's fetch type needs the DOM lib's Request and Response; WireFetch is the part of it tRPC uses.
    links: [httpLink({ url, headers, fetch: fetch as unknown as TrpcFetch })],
  });
  const { tools, confirmations } = client;
  const defaultRunId = options.runId;
  return {
    preview: (ref: ToolRef, input: unknown, opts?: PreviewOptions) =>
      call<PreviewResult>(tools.preview.mutate({ ref: toolRefOf(ref), input, runId: opts?.runId ?? defaultRunId }), "preview"),
    execute: (ref: ToolRef, input: unknown, opts?: ExecuteOptions) =>
      call<ExecuteResult>(
        tools.execute.mutate({
          ref: toolRefOf(ref),
          input,
          runId: opts?.runId ?? defaultRunId,
          confirmationToken: opts?.confirmationToken,
          idempotencyKey: opts?.idempotencyKey,
        }),
        "execute",
      ),
    // One long-poll round (`confirmations.wait`, a query): the server answers on a decision or after ~25 s,
    // and this side stops when the actor token expires (UNAUTHENTICATED at once if it already has).
    waitForConfirmation: async (requestId: string, opts?: { readonly signal?: AbortSignal }) => {
      const actorToken = await actorTokenNow();
      const expiry = watchExpiry(actorToken, requestId);
      const signals = [opts?.signal, expiry?.signal].filter((signal) => signal !== undefined);
      const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
      try {
        return await confirmations.wait.query({ requestId }, { ...(signal ? { signal } : {}), context: { [ACTOR_TOKEN_CONTEXT]: actorToken } });
      } catch (error) {
        // Stopped by the caller: reject with its reason, as `confirm()` expects, not as a failed call.
        if (opts?.signal?.aborted) throw opts.signal.reason;
        if (expiry?.signal.aborted) throw expiry.expired();
        throw failureOf(error, "wait");
      } finally {
        expiry?.stop();
      }
    },
  };
}

/**
 * The answer, or the ToolpactError of its failure. Over JSON a property whose value was undefined arrives
 * absent (the router's inferred output marks `details` and `result` optional): it reads the same.
 */
async function call<T>(request: Promise<Partial<T>>, kind: "preview" | "execute"): Promise<T> {
  try {
    return (await request) as T;
  } catch (error) {
    throw failureOf(error, kind);
  }
}

/**
 * What a failed request becomes (`exchangeFailure`): the server's toolpact error; the transport's own
 * (tRPC wraps what the fetch or the headers threw); or OUTCOME_UNKNOWN, said plainly for the calls that
 * have no effect to be unknown about.
 */
function failureOf(error: unknown, kind: "preview" | "execute" | "wait"): ToolpactError {
  quieten(error);
  return exchangeFailure(error, kind);
}

/**
 * tRPC's client error keeps the whole answer twice besides its `data` (`shape`, and `meta` with the
 * response): still there to read, but left out of what Node prints for an uncaught ToolpactError whose
 * cause it is, which then shows the wire's `data` (tRPC code, HTTP status, path, toolpact code) only.
 */
function quieten(error: unknown): void {
  if (typeof error !== "object" || error === null) return;
  for (const key of ["shape", "meta", "cause"]) {
    const own = Object.getOwnPropertyDescriptor(error, key);
    if (own === undefined || !own.configurable) continue;
    if (key === "cause" && own.value === undefined) delete (error as { cause?: unknown }).cause;
    else if (own.enumerable) Object.defineProperty(error, key, { ...own, enumerable: false });
  }
}

/** Checks the options once, where they are given; answers the tRPC endpoint URL. */
function checkOptions(options: HttpTransportOptions): string {
  if (typeof options !== "object" || options === null) {
    throw optionError(`createHttpTransport takes an options object { url, pluginKey, actorToken }; got ${describe(options)}`);
  }
  const url = checkUrl(options.url);
  checkCredential("pluginKey", options.pluginKey, "the caller plugin's key (`toolpact dev` prints one; admin.issuePluginKey issues one)");
  if (typeof options.actorToken !== "function") {
    checkCredential("actorToken", options.actorToken, "the user's actor token from the platform's identity service, or a function giving one");
  }
  if (options.runId !== undefined && (typeof options.runId !== "string" || options.runId === "")) {
    throw optionError(`createHttpTransport: option "runId" is ${describe(options.runId)}: pass the runId runs.open answered, or leave it out`);
  }
  if (options.fetch !== undefined && typeof options.fetch !== "function") {
    throw optionError(`createHttpTransport: option "fetch" is ${describe(options.fetch)}: pass a fetch function, or leave it out to use the transport's own`);
  }
  return url;
}

function checkUrl(value: unknown): string {
  const given = `createHttpTransport: option "url" is ${describe(value)}`;
  const what = 'pass the toolpact server\'s base URL, e.g. "http://127.0.0.1:4400"';
  if (typeof value !== "string" && !(value instanceof URL)) throw optionError(`${given}: ${what}`);
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw optionError(`${given}, which is not an absolute URL: ${what}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw optionError(`${given}, which is not http: or https:: ${what}`);
  // Not echoed: the URL holds a secret.
  if (url.username !== "" || url.password !== "")
    throw optionError('createHttpTransport: option "url" carries a user name or password: pass the key as "pluginKey" instead');
  if (url.search !== "" || url.hash !== "") throw optionError(`${given}, which has a query or fragment: ${what}`);
  const base = url.href.replace(/\/+$/, "");
  return base.endsWith("/trpc") ? base : `${base}/trpc`;
}

/** A header value: a non-empty string of visible ASCII (a newline would end the header). */
const CREDENTIAL = /^[\x21-\x7e]+$/;

function checkCredential(name: string, value: unknown, what: string): void {
  if (typeof value === "string" && CREDENTIAL.test(value)) return;
  const fromEnv = value === undefined ? "; if it comes from process.env, that variable is not set in this process" : "";
  const shape = typeof value === "string" ? (value === "" ? "an empty string" : "a string with spaces or control characters") : describe(value);
  throw optionError(`createHttpTransport: option "${name}" is ${shape}: pass ${what}${fromEnv}`);
}

function checkActorToken(value: unknown): string {
  if (typeof value === "string" && CREDENTIAL.test(value)) return value;
  throw optionError(
    `the actorToken function of createHttpTransport returned ${typeof value === "string" ? "an empty or malformed string" : describe(value)}: ` +
      "it must give the user's actor token as a string",
  );
}

function optionError(message: string): ToolpactError {
  return new ToolpactError("REQUEST_NOT_SENT", `${message}; nothing was sent`);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (typeof value === "string") return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `a ${typeof value}`;
}
