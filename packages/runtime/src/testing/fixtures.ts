/**
 * Test fixtures shared by this package's tests: a real runtime on a real SQLite file in a temp dir,
 * real keys, real actor tokens. Not exported from the package.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { afterEach, beforeEach } from "vitest";
import type { Manifest, ToolDeclaration } from "@toolpact/contract";
import type { Principal, TenantPolicy } from "../api.js";
import type { RuntimeOptions } from "../options.js";
import { createRuntime, type ToolpactRuntime } from "../runtime.js";
import type { SigningKey } from "../secrets.js";
import { createSqliteStore } from "../store/sqlite/sqlite-store.js";
import type { Store } from "../store/store.js";

export const ISSUER = "https://id.example.test";
export const NOTES = "com.example.notes";
export const ASSISTANT = "com.example.assistant";
export const UNTRUSTED = "com.example.untrusted";
export const LIMITED = "com.example.limited";
export const NO_CALL = "com.example.nocall";
export const TENANT = "tenant-a";
export const OTHER_TENANT = "tenant-b";

const objectSchema = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: "object",
  properties,
  required,
  additionalProperties: false,
});

export function tool(overrides: Partial<ToolDeclaration> & Pick<ToolDeclaration, "name" | "effect">): ToolDeclaration {
  return {
    version: 1,
    requiresConfirmation: overrides.effect !== "read",
    minVerificationLevel: 0,
    recovery: "none",
    timeoutMs: 2000,
    inputSchema: objectSchema({ title: { type: "string" } }, ["title"]),
    ...overrides,
  };
}

/** The provider most tests call. */
export function notesManifest(overrides: Partial<Manifest> = {}): Manifest {
  return {
    id: NOTES,
    version: "1.0.0",
    permissions: ["tools:provide", "tools:call"],
    tools: [
      tool({
        name: "create-record",
        title: "Create record",
        effect: "write",
        outputSchema: objectSchema({ id: { type: "string" }, targetId: { type: "string" } }, ["id"]),
      }),
      tool({
        name: "create-record",
        version: 2,
        effect: "write",
        inputSchema: objectSchema({ title: { type: "string" }, tags: { type: "array", items: { type: "string" } } }, ["title"]),
      }),
      tool({ name: "search-records", effect: "read", inputSchema: objectSchema({ query: { type: "string" } }, ["query"]) }),
      tool({ name: "send-summary", effect: "external", recovery: "idempotent" }),
      tool({ name: "slow-write", effect: "write", timeoutMs: 50 }),
      tool({ name: "slow-read", effect: "read", timeoutMs: 50 }),
      tool({ name: "hold-read", effect: "read", timeoutMs: 10_000 }),
      tool({ name: "explode", effect: "read" }),
      tool({ name: "bad-output", effect: "read", outputSchema: objectSchema({ id: { type: "string" } }, ["id"]) }),
      tool({ name: "verified-read", effect: "read", minVerificationLevel: 2 }),
      tool({ name: "guarded-read", effect: "read" }),
      tool({ name: "unprovided", effect: "read" }),
    ],
    gates: [],
    hooks: [],
    guards: [],
    ...overrides,
  };
}

export function callerManifest(id: string, overrides: Partial<Manifest> = {}): Manifest {
  return { id, version: "1.0.0", permissions: ["tools:call"], tools: [], gates: [], hooks: [], guards: [], ...overrides };
}

export const ALLOW_ALL: TenantPolicy = { rules: [{ tools: "*", decision: "allow" }], trustedConfirmationUis: [ASSISTANT, NOTES] };

/** Calls the provider's handlers saw, newest last. */
export interface HandlerLog {
  readonly executed: { tool: string; input: unknown; ctx: Record<string, unknown> }[];
  readonly previewed: { tool: string; input: unknown }[];
  authorizeAnswer: boolean;
  release: (() => void) | undefined;
}

export interface RuntimeFixture {
  readonly dir: string;
  readonly dbPath: string;
  readonly runtime: ToolpactRuntime;
  readonly store: Store;
  readonly handlers: HandlerLog;
  readonly logs: Record<string, unknown>[];
  readonly signingKeys: readonly SigningKey[];
  readonly storageKey: Uint8Array;
  readonly actorSecret: Uint8Array;
  /** Moves the runtime's clock forward. */
  advance(ms: number): void;
  now(): number;
  /** An actor token signed like the identity service would. */
  actorToken(claims?: Record<string, unknown>, options?: { secret?: Uint8Array; expiresInSeconds?: number }): Promise<string>;
  /** The principal `authenticate` gives for a fresh key of `pluginId` and an actor token. */
  principal(pluginId?: string, claims?: Record<string, unknown>): Promise<Principal>;
  /** Another runtime on the same database file and keys (a restart, or a second instance). */
  reopen(options?: ReopenOptions): Promise<ToolpactRuntime>;
  dispose(): Promise<void>;
}

export interface FixtureOptions {
  readonly policy?: TenantPolicy;
  readonly runtime?: Partial<RuntimeOptions>;
  readonly manifest?: Manifest;
  /** Wraps each store the fixture opens (a recording store, say). */
  readonly wrapStore?: (store: Store) => Store;
  /** Opens each store of the fixture (default: SQLite on the fixture's file), e.g. on PostgreSQL. */
  readonly openStore?: () => Promise<Store>;
}

/** What `reopen` may change about the next runtime. */
export type ReopenOptions = Partial<RuntimeOptions> & { readonly manifest?: Manifest; readonly wrapStore?: (store: Store) => Store };

/** Installs the notes provider and the callers for `tenantId` with the given policy. */
export async function configureTenant(runtime: ToolpactRuntime, tenantId: string, policy: TenantPolicy = ALLOW_ALL): Promise<void> {
  for (const id of [NOTES, ASSISTANT, UNTRUSTED, LIMITED, NO_CALL]) await runtime.admin.installPlugin(tenantId, id);
  await runtime.admin.setPolicy(tenantId, policy);
}

/** Registers the fixture plugins and the notes handlers on `runtime`. */
export function loadPlugins(runtime: ToolpactRuntime, handlers: HandlerLog, manifest: Manifest = notesManifest()): void {
  runtime.registerPlugin(manifest);
  runtime.registerPlugin(callerManifest(ASSISTANT));
  runtime.registerPlugin(callerManifest(UNTRUSTED));
  runtime.registerPlugin(callerManifest(LIMITED, { uses: [`${NOTES}:search-records`] }));
  runtime.registerPlugin(callerManifest(NO_CALL, { permissions: [] }));
  const sdk = runtime.sdkFor(NOTES);
  const seen = (tool: string) => (input: unknown, ctx: object) => {
    handlers.executed.push({ tool, input, ctx: ctx as Record<string, unknown> });
  };
  sdk.tools.provide("create-record@1", {
    preview: (input: { title: string }) => {
      handlers.previewed.push({ tool: "create-record", input });
      return { summary: `Create "${input.title}"`, details: { title: input.title } };
    },
    execute: (input: { title: string }, ctx) => {
      seen("create-record")(input, ctx);
      return { id: `rec-${handlers.executed.length}`, targetId: `rec-${handlers.executed.length}` };
    },
  });
  sdk.tools.provide("create-record@2", {
    execute: (input, ctx) => {
      seen("create-record@2")(input, ctx);
      return { id: "v2" };
    },
  });
  sdk.tools.provide("search-records", {
    execute: (input: { query: string }, ctx) => {
      seen("search-records")(input, ctx);
      return { hits: [input.query] };
    },
  });
  sdk.tools.provide("send-summary", {
    execute: async (input: { title: string }, ctx) => {
      seen("send-summary")(input, ctx);
      return { sent: input.title };
    },
  });
  const hang = (tool: string) => ({
    execute: (input: unknown, ctx: { signal: AbortSignal }) => {
      seen(tool)(input, ctx);
      return new Promise((resolve) => {
        handlers.release = () => resolve({ late: true });
        ctx.signal.addEventListener("abort", () => setTimeout(() => resolve({ late: true }), 5));
      });
    },
  });
  sdk.tools.provide("slow-write", hang("slow-write"));
  sdk.tools.provide("slow-read", hang("slow-read"));
  sdk.tools.provide("hold-read", hang("hold-read"));
  sdk.tools.provide("explode", {
    execute: async (input: { title: string }, ctx) => {
      seen("explode")(input, ctx);
      class ProviderDatabaseError extends Error {}
      throw new ProviderDatabaseError(`cannot store ${input.title}`);
    },
  });
  sdk.tools.provide("bad-output", {
    execute: (input, ctx) => {
      seen("bad-output")(input, ctx);
      return { id: 42 };
    },
  });
  sdk.tools.provide("verified-read", {
    execute: (input, ctx) => {
      seen("verified-read")(input, ctx);
      return { ok: true };
    },
  });
  sdk.tools.provide("guarded-read", {
    authorize: () => handlers.authorizeAnswer,
    execute: (input, ctx) => {
      seen("guarded-read")(input, ctx);
      return { ok: true };
    },
  });
}

export async function createFixture(options: FixtureOptions = {}): Promise<RuntimeFixture> {
  const dir = mkdtempSync(join(tmpdir(), "toolpact-runtime-"));
  const dbPath = join(dir, "toolpact.db");
  const signingKeys: SigningKey[] = [{ kid: "k1", key: randomBytes(32) }];
  const storageKey = new Uint8Array(randomBytes(32));
  const actorSecret = new Uint8Array(randomBytes(32));
  let offset = 0;
  const clock = () => Date.now() + offset;
  const logs: Record<string, unknown>[] = [];
  const logger = {
    info: (entry: Readonly<Record<string, unknown>>) => logs.push({ level: "info", ...entry }),
    warn: (entry: Readonly<Record<string, unknown>>) => logs.push({ level: "warn", ...entry }),
    error: (entry: Readonly<Record<string, unknown>>) => logs.push({ level: "error", ...entry }),
  };
  const handlers: HandlerLog = { executed: [], previewed: [], authorizeAnswer: true, release: undefined };
  const runtimes: ToolpactRuntime[] = [];
  const stores: Store[] = [];

  const make = async (overrides: ReopenOptions = {}): Promise<ToolpactRuntime> => {
    const { manifest, wrapStore, ...runtimeOverrides } = overrides;
    const opened = options.openStore === undefined ? await createSqliteStore({ path: dbPath }) : await options.openStore();
    const wrap = wrapStore ?? options.wrapStore;
    const store = wrap === undefined ? opened : wrap(opened);
    stores.push(store);
    const runtime = await createRuntime({
      store,
      signingKeys,
      storageKey,
      actorTokens: { issuer: ISSUER, secret: actorSecret },
      logger,
      clock,
      ...options.runtime,
      ...runtimeOverrides,
    });
    loadPlugins(runtime, handlers, manifest ?? options.manifest);
    runtimes.push(runtime);
    return runtime;
  };

  const runtime = await make();
  const store = stores[0]!;
  await configureTenant(runtime, TENANT, options.policy ?? ALLOW_ALL);

  const actorToken: RuntimeFixture["actorToken"] = async (claims = {}, tokenOptions = {}) => {
    const iat = Math.floor(clock() / 1000);
    const body: Record<string, unknown> = { sub: "alice", tid: TENANT, lvl: 1, roles: ["member"], ...claims };
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
    return new SignJWT(body)
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(ISSUER)
      .setAudience("toolpact")
      .setIssuedAt(iat)
      .setExpirationTime(iat + (tokenOptions.expiresInSeconds ?? 600))
      .sign(tokenOptions.secret ?? actorSecret);
  };

  const keys = new Map<string, string>();
  const principal: RuntimeFixture["principal"] = async (pluginId = ASSISTANT, claims = {}) => {
    const tenantId = typeof claims.tid === "string" ? claims.tid : TENANT;
    const cacheKey = `${tenantId}\u0000${pluginId}`;
    let key = keys.get(cacheKey);
    if (key === undefined) {
      key = (await runtime.admin.issuePluginKey(tenantId, pluginId)).key;
      keys.set(cacheKey, key);
    }
    return runtime.authenticate({ pluginKey: key, actorToken: await actorToken(claims) });
  };

  return {
    dir,
    dbPath,
    runtime,
    store,
    handlers,
    logs,
    signingKeys,
    storageKey,
    actorSecret,
    advance: (ms) => {
      offset += ms;
    },
    now: clock,
    actorToken,
    principal,
    reopen: (overrides) => make(overrides),
    dispose: async () => {
      for (const made of runtimes) await made.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Gives each test of the calling file a fresh fixture: made before the test and handed to `use` (which
 * may prepare more from it), disposed after it. Call once, at the top level of a test file.
 */
export function eachTestFixture(use: (fx: RuntimeFixture) => unknown): void {
  let current: RuntimeFixture | undefined;
  beforeEach(async () => {
    current = await createFixture();
    await use(current);
  });
  afterEach(async () => {
    await current?.dispose();
    current = undefined;
  });
}

/** `eachTestFixture` that also hands over alice: the principal `fx.principal()` gives. */
export function eachTestFixtureWithAlice(use: (made: { fx: RuntimeFixture; alice: Principal }) => void): void {
  eachTestFixture(async (fx) => use({ fx, alice: await fx.principal() }));
}

/** The rejection of `promise`, for inspecting a ToolpactError. */
export async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string; data: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; message: string; data: Record<string, unknown> };
  }
  throw new Error("expected the promise to reject, and it resolved");
}
