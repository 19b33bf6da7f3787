/** A real toolpact stack for integration tests: SQLite file, runtime, HTTP server on 127.0.0.1:0. */
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { ToolCallContext, ToolExecuteContext, ToolHandler } from "../../../packages/contract/src/index.js";
import { createRuntime, createSqliteStore, type RuntimeOptions, type ToolpactRuntime } from "../../../packages/runtime/src/index.js";
import { createToolpactServer, type Logger, type ToolpactServer, type ToolpactServerOptions } from "../../../packages/server/src/index.js";
import {
  ABSENT_PROVIDER_ID,
  ASSISTANT_ID,
  IDLE_CALLER_ID,
  MUTE_CALLER_ID,
  NARROW_CALLER_ID,
  OTHER_CALLER_ID,
  PAUSED_PROVIDER_ID,
  PROVIDER_ID,
  testManifests,
} from "./plugins.js";
import { ACTOR_ISSUER, mintActorToken, type ActorTokenSpec } from "./tokens.js";
import { callerHeaders, mutate, ok, query } from "./wire.js";

/** The secrets one test world runs with (kept across restarts of that world). */
export interface StackSecrets {
  readonly signingKeys: { kid: string; key: Uint8Array }[];
  readonly storageKey: Uint8Array;
  readonly actorSecret: Uint8Array;
  readonly adminKey: string;
}

/** Fresh random secrets. */
export function makeSecrets(): StackSecrets {
  return {
    signingKeys: [{ kid: "k1", key: new Uint8Array(randomBytes(32)) }],
    storageKey: new Uint8Array(randomBytes(32)),
    actorSecret: new Uint8Array(randomBytes(32)),
    adminKey: randomBytes(32).toString("base64url"),
  };
}

/** What the provider's handlers saw: invocation counts per tool and the last execute context. */
export interface ProviderProbe {
  readonly invocations: Map<string, number>;
  lastContext?: ToolExecuteContext;
  lastPreviewContext?: ToolCallContext;
  /** How long `slow-read` takes. */
  slowReadMs: number;
}

export interface Stack {
  readonly url: string;
  readonly runtime: ToolpactRuntime;
  readonly server: ToolpactServer;
  readonly probe: ProviderProbe;
  /** Every log line of the runtime and the server, as JSON text. */
  readonly logs: string[];
  readonly dbFile: string;
  /** An admin mutation over HTTP; throws unless it succeeds. */
  admin<T = unknown>(path: string, input: unknown): Promise<T>;
  /** An admin query over HTTP; throws unless it succeeds. */
  adminQuery<T = unknown>(path: string, input: unknown): Promise<T>;
  close(): Promise<void>;
}

export interface StackOptions {
  readonly dbFile: string;
  /** The runtime's clock; tests move it to exercise expiry. Default `Date.now`. */
  readonly clock?: () => number;
  readonly secrets: StackSecrets;
  readonly variant?: "base" | "changed-schema";
  /** The server's bound on draining in-flight requests at close (default 5 s). */
  readonly drainTimeoutMs?: number;
  /**
   * The runtime's and server's `publicUrl`: a URL, or `"self"` for this server's own address (a port is
   * reserved first), so confirmation links work in a browser. Default `https://toolpact.test.example`.
   */
  readonly publicUrl?: string;
  /** Registers and activates more plugins, after the test world's (before the server starts). */
  readonly setup?: (runtime: ToolpactRuntime) => void;
  /** The server's MCP endpoint options (sessions on or off, polling periods). */
  readonly mcp?: ToolpactServerOptions["mcp"];
  /** The server's per-caller and body bounds (default: the server's defaults). */
  readonly bounds?: Pick<ToolpactServerOptions, "maxRequestsPerCaller" | "maxLongPollsPerCaller" | "maxBodyDepth" | "maxBodyBytes">;
  /** OAuth access tokens accepted besides plugin keys (the server's `oauth`, parsed; docs/oauth.md). */
  readonly oauth?: ToolpactServerOptions["oauth"];
  /** The confirmation page's sign-in at an OpenID provider (test/oidc). */
  readonly confirmationLogin?: ToolpactServerOptions["confirmationLogin"];
  /** More runtime options (rate limits, lease timing, ...). */
  readonly runtimeOptions?: Partial<Omit<RuntimeOptions, "store" | "signingKeys" | "storageKey" | "actorTokens" | "logger">>;
}

/** A free port on 127.0.0.1 (listened on once, then released). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => resolve());
  });
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** Starts a runtime on `dbFile` with the test plugins registered and the provider's handlers activated. */
export async function startStack(options: StackOptions): Promise<Stack> {
  const logs: string[] = [];
  const logger: Logger = {
    info: (entry) => void logs.push(JSON.stringify({ level: "info", ...entry })),
    warn: (entry) => void logs.push(JSON.stringify({ level: "warn", ...entry })),
    error: (entry) => void logs.push(JSON.stringify({ level: "error", ...entry })),
  };
  const { secrets } = options;
  const port = options.publicUrl === "self" ? await freePort() : 0;
  const publicUrl = options.publicUrl === "self" ? `http://127.0.0.1:${port}` : (options.publicUrl ?? "https://toolpact.test.example");
  const runtime = await createRuntime({
    ...options.runtimeOptions,
    store: await createSqliteStore({ path: options.dbFile }),
    signingKeys: secrets.signingKeys,
    storageKey: secrets.storageKey,
    actorTokens: { issuer: ACTOR_ISSUER, secret: secrets.actorSecret },
    publicUrl,
    logger,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  for (const manifest of testManifests(options.variant)) runtime.registerPlugin(manifest);
  const probe: ProviderProbe = { invocations: new Map(), slowReadMs: 400 };
  activateProvider(runtime, probe);
  runtime.sdkFor(PAUSED_PROVIDER_ID).tools.provide("ping", { execute: () => ({ pong: true }) });
  runtime.sdkFor(ABSENT_PROVIDER_ID).tools.provide("ping", { execute: () => ({ pong: true }) });
  options.setup?.(runtime);

  const server = createToolpactServer({
    runtime,
    adminKey: secrets.adminKey,
    port,
    publicUrl,
    logger,
    drainTimeoutMs: options.drainTimeoutMs ?? 5_000,
    ...(options.mcp === undefined ? {} : { mcp: options.mcp }),
    ...(options.oauth === undefined ? {} : { oauth: options.oauth }),
    ...(options.confirmationLogin === undefined ? {} : { confirmationLogin: options.confirmationLogin }),
    ...options.bounds,
  });
  const url = await server.listen();
  const adminHeaders = { authorization: `Bearer ${secrets.adminKey}` };
  return {
    url,
    runtime,
    server,
    probe,
    logs,
    dbFile: options.dbFile,
    admin: async <T>(path: string, input: unknown) => ok<T>(await mutate(url, `admin.${path}`, input, adminHeaders)),
    adminQuery: async <T>(path: string, input: unknown) => ok<T>(await query(url, `admin.${path}`, input, adminHeaders)),
    close: () => server.close(),
  };
}

function count(probe: ProviderProbe, tool: string): void {
  probe.invocations.set(tool, (probe.invocations.get(tool) ?? 0) + 1);
}

type Input = { title: string; body?: string };

function activateProvider(runtime: ToolpactRuntime, probe: ProviderProbe): void {
  const handler = <T>(h: ToolHandler<T, unknown>) => h as ToolHandler<unknown, unknown>;
  runtime.sdkFor(PROVIDER_ID).tools.provideAll({
    providerId: PROVIDER_ID,
    tools: [
      {
        name: "create-note",
        version: 1,
        handler: handler<Input>({
          preview: (input, ctx) => {
            probe.lastPreviewContext = ctx;
            return { summary: `Create note "${input.title}"`, details: { title: input.title } };
          },
          execute: (input, ctx) => {
            count(probe, "create-note");
            probe.lastContext = ctx;
            return { id: `note-${probe.invocations.get("create-note")}`, title: input.title, body: input.body ?? null };
          },
        }),
      },
      {
        name: "list-notes",
        version: 1,
        handler: handler<{ query?: string }>({
          execute: (input) => {
            count(probe, "list-notes");
            return { notes: [{ id: "note-1", title: "first" }], query: input.query ?? null };
          },
        }),
      },
      {
        name: "echo",
        version: 1,
        handler: handler<Record<string, unknown>>({
          execute: (input, ctx) => {
            count(probe, "echo");
            probe.lastContext = ctx;
            return {
              input,
              seen: { tenantId: ctx.tenantId, userId: ctx.actor.userId, callerPluginId: ctx.callerPluginId, tool: ctx.tool },
            };
          },
        }),
      },
      {
        name: "slow-note",
        version: 1,
        handler: handler<Input>({
          execute: async () => {
            count(probe, "slow-note");
            await sleep(1_000);
            return { done: true };
          },
        }),
      },
      {
        name: "slow-read",
        version: 1,
        handler: handler<unknown>({
          execute: async () => {
            count(probe, "slow-read");
            await sleep(probe.slowReadMs);
            return { done: true };
          },
        }),
      },
      {
        name: "broken",
        version: 1,
        handler: handler<Input>({
          execute: (input) => {
            count(probe, "broken");
            throw new RangeError(`provider exploded while writing ${input.title}`);
          },
        }),
      },
      ...[1, 2].map((version) => ({
        name: "versioned",
        version,
        handler: handler<Input>({
          execute: () => {
            count(probe, `versioned@${version}`);
            return { version };
          },
        }),
      })),
      {
        name: "verified-read",
        version: 1,
        handler: handler<unknown>({ execute: () => ({ secret: "for verified users" }) }),
      },
      {
        name: "deep",
        version: 1,
        handler: handler<unknown>({ execute: () => ({ ok: true }) }),
      },
    ],
  });
}

/** The plugin keys of the test world, by tenant and plugin. */
export interface WorldKeys {
  readonly t1: Record<string, { keyId: string; key: string }>;
  readonly t2: Record<string, { keyId: string; key: string }>;
}

/** A tenant of the test world. */
export type Tenant = keyof WorldKeys;

/** Request headers for a caller of the test world: its plugin key in a tenant and a fresh actor token. */
export type CallerHeaders = (caller: string, spec?: ActorTokenSpec, tenant?: Tenant) => Promise<Record<string, string>>;

/** Headers as `caller` in `tenant` (default "t1"), acting for the actor `spec` describes (user "user-1" unless it says). */
export function callerHeadersOf(keys: WorldKeys, actorSecret: Uint8Array): CallerHeaders {
  return async (caller, spec = {}, tenant = "t1") => {
    const key = keys[tenant][caller];
    if (!key) throw new Error(`no key for ${caller} in ${tenant}`);
    return callerHeaders(key.key, await mintActorToken(actorSecret, { tid: tenant, expiresIn: 3600, ...spec }));
  };
}

/** The tenant policy of the test world: reads allowed, writes confirmed in token mode by trusted UIs. */
export const TEST_POLICY = {
  rules: [
    { tools: "com.test.*", effects: ["read"], decision: "allow" },
    { tools: "com.test.*", effects: ["write", "external"], decision: "confirm", mode: "token" },
  ],
  trustedConfirmationUis: [ASSISTANT_ID, OTHER_CALLER_ID, NARROW_CALLER_ID, MUTE_CALLER_ID, IDLE_CALLER_ID],
} as const;

/**
 * Configures tenants t1 and t2 through the admin API: installs plugins, sets the policy, issues keys.
 * In t1 the paused provider and the idle caller are installed, then disabled.
 */
export async function configureWorld(stack: Stack): Promise<WorldKeys> {
  const t1Plugins = [PROVIDER_ID, PAUSED_PROVIDER_ID, ASSISTANT_ID, OTHER_CALLER_ID, NARROW_CALLER_ID, MUTE_CALLER_ID, IDLE_CALLER_ID];
  for (const pluginId of t1Plugins) await stack.admin("installPlugin", { tenantId: "t1", pluginId });
  for (const pluginId of [PROVIDER_ID, ASSISTANT_ID]) await stack.admin("installPlugin", { tenantId: "t2", pluginId });
  await stack.admin("setPluginEnabled", { tenantId: "t1", pluginId: PAUSED_PROVIDER_ID, enabled: false });
  await stack.admin("setPluginEnabled", { tenantId: "t1", pluginId: IDLE_CALLER_ID, enabled: false });
  for (const tenantId of ["t1", "t2"]) await stack.admin("setPolicy", { tenantId, policy: TEST_POLICY });
  const t1: WorldKeys["t1"] = {};
  for (const pluginId of [ASSISTANT_ID, OTHER_CALLER_ID, NARROW_CALLER_ID, MUTE_CALLER_ID, IDLE_CALLER_ID]) {
    t1[pluginId] = await stack.admin("issuePluginKey", { tenantId: "t1", pluginId });
  }
  const t2: WorldKeys["t2"] = { [ASSISTANT_ID]: await stack.admin("issuePluginKey", { tenantId: "t2", pluginId: ASSISTANT_ID }) };
  return { t1, t2 };
}
