import { createHash } from "node:crypto";
import { createTRPCUntypedClient, httpLink } from "@trpc/client";
import { exchangeFailure, withSendFailures, withToolpactAnswers, type WireCall } from "@toolpact/protocol";
import type { ConfirmationStatus, ExecuteResult, PreviewResult, ToolRef } from "@toolpact/contract";
import type { CallTraceContext, ToolListing } from "@toolpact/runtime";
import type { CallerFacts } from "./request-state.js";
import type { ToolBackend } from "./tool-backend.js";

/** A caller's credentials, as `toolpact serve` checks them on every request. */
export interface CallerKeys {
  /** Sent as `Authorization: Bearer <plugin key>`. */
  readonly pluginKey: string;
  /** Sent as `X-Toolpact-Actor`. */
  readonly actorToken: string;
}

/** Options of `createRemoteBackend`. */
export interface RemoteBackendOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:4400`; calls go to `<url>/trpc`. */
  readonly url: string | URL;
  /** Read before every request, so a refreshed actor token is picked up without a restart. */
  readonly keys: () => CallerKeys | Promise<CallerKeys>;
  /** Where `url` came from, as error messages name it; default "the server URL". */
  readonly urlSetting?: string;
}

type TrpcFetch = NonNullable<Parameters<typeof httpLink>[0]["fetch"]>;

/**
 * A backend over a toolpact server's tRPC HTTP API (`tools.list`, `tools.find`, `tools.preview`, `tools.execute`,
 * `confirmations.wait`, `confirmations.cancel`): what `toolpact mcp --url` forwards to.
 */
export function createRemoteBackend(options: RemoteBackendOptions): ToolBackend {
  const urlSetting = options.urlSetting ?? "the server URL";
  // The same decisions as @toolpact/client's transport: a request that never left, or an answer that is not toolpact's.
  const fetch = withToolpactAnswers(
    withSendFailures((url, init) => globalThis.fetch(url, init as RequestInit), urlSetting),
    urlSetting,
  );
  const client = createTRPCUntypedClient({
    links: [
      httpLink({
        url: `${String(options.url).replace(/\/+$/, "")}/trpc`,
        fetch: fetch as unknown as TrpcFetch,
        headers: async ({ op }) => {
          const keys = await options.keys();
          // The server records these calls as MCP calls (a label, not a credential).
          const headers: Record<string, string> = { authorization: `Bearer ${keys.pluginKey}`, "x-toolpact-actor": keys.actorToken, "x-toolpact-via": "mcp" };
          // The MCP request's trace continues on the server (W3C trace context headers).
          const trace = op.context.trace as CallTraceContext | undefined;
          if (trace?.traceparent !== undefined) headers.traceparent = trace.traceparent;
          if (trace?.tracestate !== undefined) headers.tracestate = trace.tracestate;
          return headers;
        },
      }),
    ],
  });
  const wire = async <T>(call: WireCall, request: () => Promise<unknown>): Promise<T> => {
    try {
      return (await request()) as T;
    } catch (error) {
      throw exchangeFailure(error, call);
    }
  };
  const listTools = () => wire<ToolListing[]>("list", () => client.query("tools.list"));
  // A server from before `tools.find` answers that it has no such procedure: its listing answers instead, from then on.
  let findable = true;
  const findTool = async (ref: ToolRef): Promise<ToolListing | undefined> => {
    if (findable) {
      try {
        return ((await client.query("tools.find", { ref: refOf(ref) })) as ToolListing | null) ?? undefined;
      } catch (error) {
        if (!isMissingProcedure(error)) throw exchangeFailure(error, "find");
        findable = false;
      }
    }
    return listedEntry(await listTools(), ref);
  };
  const backend = (trace: CallTraceContext | undefined): ToolBackend => ({
    caller: async () => callerFactsOf(await options.keys()),
    listTools,
    findTool,
    preview: (ref, input) => wire<PreviewResult>("preview", () => client.mutation("tools.preview", { ref: refOf(ref), input }, { context: { trace } })),
    execute: (ref, input, execute = {}) =>
      wire<ExecuteResult>("execute", () => client.mutation("tools.execute", { ref: refOf(ref), input, ...execute }, { context: { trace } })),
    waitConfirmation: (requestId, round) =>
      wire<ConfirmationStatus>("wait", () =>
        client.query("confirmations.wait", { requestId, timeoutMs: round.timeoutMs }, round.signal === undefined ? {} : { signal: round.signal }),
      ),
    cancelConfirmation: (requestId) => wire<void>("cancel", () => client.mutation("confirmations.cancel", { requestId })),
    withTrace: (next) => backend(next),
  });
  return backend(undefined);
}

/** tRPC's answer for a procedure the server does not have (routing's NOT_FOUND, not a toolpact refusal). */
function isMissingProcedure(error: unknown): boolean {
  const data = (error as { data?: { code?: unknown; toolpactCode?: unknown } } | null)?.data;
  return data?.code === "NOT_FOUND" && data.toolpactCode === "INPUT_INVALID";
}

/** What `tools.find` answers, read from a listing: `ref.version`, or without one the highest listed. */
function listedEntry(listing: readonly ToolListing[], ref: ToolRef): ToolListing | undefined {
  let found: ToolListing | undefined;
  for (const entry of listing) {
    if (entry.providerId !== ref.providerId || entry.name !== ref.tool) continue;
    if (ref.version === undefined ? found === undefined || entry.version > found.version : entry.version === ref.version) found = entry;
  }
  return found;
}

function refOf(ref: ToolRef): ToolRef {
  return ref.version === undefined ? { providerId: ref.providerId, tool: ref.tool } : { providerId: ref.providerId, tool: ref.tool, version: ref.version };
}

/**
 * Who the credentials act for, as far as this side can tell without the server's keys: the tenant and user
 * the actor token names (the server checks the token on every call), and the plugin key as a digest (its
 * plugin id is the server's to know). Enough to bind an approval state to these credentials.
 */
function callerFactsOf(keys: CallerKeys): CallerFacts {
  const payload = keys.actorToken.split(".")[1] ?? "";
  let claims: { tid?: unknown; sub?: unknown } = {};
  try {
    claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as typeof claims;
  } catch {
    claims = {};
  }
  return {
    tenantId: typeof claims.tid === "string" ? claims.tid : "",
    actorUserId: typeof claims.sub === "string" ? claims.sub : createHash("sha256").update(keys.actorToken).digest("base64url"),
    callerPluginId: `key:${createHash("sha256").update(keys.pluginKey).digest("base64url").slice(0, 22)}`,
  };
}
