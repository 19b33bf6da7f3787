/**
 * A test host for provider authors: the real pipeline (the runtime's steps, a real SQLite store in memory,
 * real plugin keys and actor tokens) with a default tenant, policy and actor, in a few lines.
 */
import { randomBytes, randomUUID } from "node:crypto";
import path from "node:path";
import { SignJWT } from "jose";
import {
  ToolpactError,
  formatDiagnostic,
  loadManifest,
  parseManifest,
  toolRefOf,
  type ConfirmationStatus,
  type ExecuteOptions,
  type ExecuteResult,
  type Manifest,
  type ManifestLoadResult,
  type PreviewOptions,
  type PreviewResult,
  type ToolRef,
  type ToolTransport,
} from "@toolpact/contract";
import type { ActivityPage, ActivityQuery, ConfirmationDecision, Principal, TenantPolicy } from "../api.js";
import { PRESENCE_AUDIENCE } from "../identity/presence-token.js";
import { silentLogger, type Logger } from "../logger.js";
import type { RuntimeOptions } from "../options.js";
import { importActivate, readPluginFolder, runActivate, type ActivatePlugin } from "../plugin-code/plugin-folder.js";
import { pluginIdHint } from "../plugin-id-hint.js";
import { createRuntime, type ToolpactRuntime } from "../runtime.js";
import { createSqliteStore } from "../store/sqlite/sqlite-store.js";

/** The caller a test host's clients call as, unless `{ caller }` names another loaded plugin. */
export const TEST_CALLER_ID = "toolpact.test-caller";
/** The tenant a test host installs every plugin for. */
export const TEST_TENANT_ID = "test-tenant";
/** The `iss` of the actor tokens a test host signs. */
export const TEST_ACTOR_ISSUER = "toolpact-test-host";

/**
 * A plugin for the test host: its manifest (a path, resolved from the working directory, or the parsed
 * JSON) with its `activate`, or a folder loaded the way `toolpact serve` loads it (plugin.json and the
 * module its package.json names). A caller that only calls needs no `activate`.
 */
export type TestPlugin = { readonly manifest: string | object; readonly activate?: ActivatePlugin } | { readonly dir: string };

/** The actor a test host's calls act for. */
export interface TestActor {
  readonly userId?: string;
  /** 0..3 (default 3, so no tool's minimum verification level stands in the way). */
  readonly verificationLevel?: number;
  readonly roles?: readonly string[];
}

/** Options of `createTestHost`. */
export interface TestHostOptions {
  readonly plugins: readonly TestPlugin[];
  /**
   * How write and external tools are confirmed under the default policy: `token` (default), where
   * `confirm(preview)` returns the token at once, or `platform`, where the user approves with `host.approve`.
   */
  readonly confirmation?: "token" | "platform";
  /** Replaces the default policy (allow read, confirm write and external, every loaded caller trusted as a confirmation UI). */
  readonly policy?: TenantPolicy;
  /** A SQLite file to keep the store in (default in memory), for tests that read it afterwards. */
  readonly database?: string;
  readonly actor?: TestActor;
  /** Receives the runtime's log lines (default: none). */
  readonly logger?: Logger;
  /** Runtime options to change (the store, keys and actor tokens are the test host's own). */
  readonly runtime?: Partial<Omit<RuntimeOptions, "store" | "signingKeys" | "storageKey" | "actorTokens">>;
}

/** Which loaded plugin a transport or client calls as. */
export interface TestCallerOptions {
  /** A loaded plugin holding `tools:call` (default: the built-in test caller, which `uses` every loaded tool). */
  readonly caller?: string;
  /** Another actor than the host's default one. */
  readonly actor?: TestActor;
}

/** A running test host. */
export interface TestHost {
  readonly runtime: ToolpactRuntime;
  readonly tenantId: string;
  /** The default actor's user id. */
  readonly userId: string;
  /** The manifests of the loaded plugins (the test caller not included), in the order given. */
  readonly plugins: readonly Manifest[];
  /** A transport calling as the test caller (or `options.caller`) for the default actor (or `options.actor`). */
  transport(options?: TestCallerOptions): ToolTransport;
  /** A generated client (`createNotesClient`, say) over `transport(options)`. */
  client<TClient>(create: (transport: ToolTransport) => TClient, options?: TestCallerOptions): TClient;
  /**
   * Approves a platform-mode preview as the default actor (or `as`, for a preview made with another
   * actor), as that person would on the confirmation page; only the actor a request is for may decide it.
   */
  approve(preview: PreviewResult, as?: TestActor): Promise<ConfirmationDecision>;
  /** Denies a platform-mode preview, like `approve`. */
  deny(preview: PreviewResult, as?: TestActor): Promise<ConfirmationDecision>;
  /** An actor token for the test tenant, signed as the identity service would (for HTTP or MCP tests). */
  actorToken(actor?: TestActor & { readonly azp?: string }): Promise<string>;
  /**
   * A presence token for the confirmation page (`/confirm/session?token=...`), as the identity service
   * issues one when it sends the user's browser there: single use, valid 5 minutes.
   */
  presenceToken(actor?: Pick<TestActor, "userId">): Promise<string>;
  /** A fresh plugin key of a loaded plugin (or the test caller) for the test tenant. */
  pluginKey(pluginId?: string): Promise<string>;
  /** The test tenant's activity log, newest first. */
  activity(query?: ActivityQuery): Promise<ActivityPage>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

interface ReadyPlugin {
  readonly manifest: Manifest;
  readonly activate: ActivatePlugin | undefined;
}

/**
 * Starts a test host: the plugins registered and activated on a runtime over in-memory SQLite, installed
 * for one tenant with a policy that allows read and confirms write and external tools.
 *
 * @example
 * const host = await createTestHost({ plugins: [{ manifest: "plugin.json", activate }] });
 * const notes = host.client(createNotesClient);
 * const preview = await notes.createRecord.preview({ title: "a" });
 * const token = await notes.createRecord.confirm(preview);
 * await notes.createRecord.execute({ title: "a" }, { confirmationToken: token });
 * await host.close();
 */
export async function createTestHost(options: TestHostOptions): Promise<TestHost> {
  const plugins = await Promise.all(options.plugins.map((plugin, index) => readTestPlugin(plugin, index)));
  checkUnique(plugins);
  const tenantId = TEST_TENANT_ID;
  const actorSecret = new Uint8Array(randomBytes(32));
  const defaultActor = {
    userId: options.actor?.userId ?? "test-user",
    verificationLevel: options.actor?.verificationLevel ?? 3,
    roles: options.actor?.roles ?? [],
  };

  const store = await createSqliteStore({ path: options.database ?? ":memory:" });
  const runtime = await createRuntime({
    logger: options.logger ?? silentLogger,
    ...options.runtime,
    store,
    signingKeys: [{ kid: "test", key: randomBytes(32) }],
    storageKey: new Uint8Array(randomBytes(32)),
    actorTokens: { issuer: TEST_ACTOR_ISSUER, secret: actorSecret },
  }).catch(async (error: unknown) => {
    await store.close().catch(() => {});
    throw error;
  });

  try {
    const testCaller = testCallerManifest(plugins.map((plugin) => plugin.manifest));
    runtime.registerPlugin(testCaller);
    for (const plugin of plugins) runtime.registerPlugin(plugin.manifest);
    for (const plugin of plugins) {
      if (plugin.activate !== undefined) await runActivate(plugin.manifest.id, plugin.activate, runtime.sdkFor(plugin.manifest.id));
    }
    for (const manifest of [testCaller, ...plugins.map((plugin) => plugin.manifest)]) await runtime.admin.installPlugin(tenantId, manifest.id);
    const callers = [testCaller.id, ...plugins.filter((plugin) => plugin.manifest.permissions.includes("tools:call")).map((plugin) => plugin.manifest.id)];
    await runtime.admin.setPolicy(tenantId, options.policy ?? defaultPolicy(options.confirmation ?? "token", callers));
  } catch (error) {
    await runtime.close().catch(() => {});
    throw error;
  }

  const actorToken = async (actor: TestActor & { readonly azp?: string } = {}): Promise<string> => {
    const claims: Record<string, unknown> = {
      tid: tenantId,
      lvl: actor.verificationLevel ?? defaultActor.verificationLevel,
      roles: [...(actor.roles ?? defaultActor.roles)],
    };
    if (actor.azp !== undefined) claims.azp = actor.azp;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(TEST_ACTOR_ISSUER)
      .setAudience("toolpact")
      .setSubject(actor.userId ?? defaultActor.userId)
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(actorSecret);
  };

  const presenceToken = async (actor: Pick<TestActor, "userId"> = {}): Promise<string> =>
    new SignJWT({ tid: tenantId, jti: randomUUID() })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(TEST_ACTOR_ISSUER)
      .setAudience(PRESENCE_AUDIENCE)
      .setSubject(actor.userId ?? defaultActor.userId)
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(actorSecret);

  const keys = new Map<string, Promise<string>>();
  const pluginKey = async (pluginId: string = TEST_CALLER_ID): Promise<string> => (await runtime.admin.issuePluginKey(tenantId, pluginId)).key;
  const keyOf = (pluginId: string): Promise<string> => {
    let key = keys.get(pluginId);
    if (key === undefined) {
      key = pluginKey(pluginId);
      keys.set(pluginId, key);
      key.catch(() => keys.delete(pluginId));
    }
    return key;
  };

  const transport = (callerOptions: TestCallerOptions = {}): ToolTransport => {
    const caller = callerOptions.caller ?? TEST_CALLER_ID;
    if (caller !== TEST_CALLER_ID && !plugins.some((plugin) => plugin.manifest.id === caller)) {
      throw new ToolpactError(
        "PROVIDER_NOT_FOUND",
        `caller "${caller}" is not loaded in this test host${pluginIdHint(
          caller,
          plugins.map((plugin) => plugin.manifest.id),
        )}: ` + `add it to createTestHost({ plugins }), or leave "caller" out to call as ${TEST_CALLER_ID}`,
      );
    }
    let token: Promise<string> | undefined;
    // Authentication runs for every call, as it does for a request over HTTP: a real key and a real actor token.
    const principal = async (): Promise<Principal> => {
      token ??= actorToken(callerOptions.actor);
      return runtime.authenticate({ pluginKey: await keyOf(caller), actorToken: await token });
    };
    return {
      preview: async (ref: ToolRef, input: unknown, opts?: PreviewOptions): Promise<PreviewResult> =>
        runtime.preview(await principal(), toolRefOf(ref), input, opts),
      execute: async (ref: ToolRef, input: unknown, opts?: ExecuteOptions): Promise<ExecuteResult> =>
        runtime.execute(await principal(), toolRefOf(ref), input, opts),
      waitForConfirmation: async (requestId: string, opts?: { readonly signal?: AbortSignal }): Promise<ConfirmationStatus> => {
        const status = await runtime.waitConfirmation(await principal(), requestId, opts?.signal === undefined ? {} : { signal: opts.signal });
        opts?.signal?.throwIfAborted();
        return status;
      },
    };
  };

  const decide = async (preview: PreviewResult, decision: "approve" | "deny", as: TestActor = {}): Promise<ConfirmationDecision> => {
    const { confirmation } = preview;
    if (!confirmation.required || confirmation.mode !== "platform") {
      throw new ToolpactError(
        "CONFIRMATION_INVALID",
        `host.${decision}(preview) decides platform-mode confirmations, and this preview ${confirmation.required ? "carries a token-mode token: pass it to execute as it is" : "needs no confirmation"}; ` +
          `start the host with createTestHost({ plugins, confirmation: "platform" }) to test the user's decision`,
      );
    }
    return runtime.decideConfirmation({ tenantId, userId: as.userId ?? defaultActor.userId }, confirmation.requestId, decision);
  };

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => (closed ??= runtime.close());
  return {
    runtime,
    tenantId,
    userId: defaultActor.userId,
    plugins: plugins.map((plugin) => plugin.manifest),
    transport,
    client: (create, callerOptions) => create(transport(callerOptions)),
    approve: (preview, as) => decide(preview, "approve", as),
    deny: (preview, as) => decide(preview, "deny", as),
    actorToken,
    presenceToken,
    pluginKey,
    activity: (query) => runtime.admin.listActivity(tenantId, query),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The built-in caller: holds `tools:call` and `uses` every tool of the loaded plugins. */
function testCallerManifest(manifests: readonly Manifest[]): Manifest {
  const providers = manifests.filter((manifest) => manifest.tools.length > 0).map((manifest) => `${manifest.id}:*`);
  return {
    id: TEST_CALLER_ID,
    name: "toolpact test host",
    version: "1.0.0",
    permissions: ["tools:call"],
    ...(providers.length === 0 ? {} : { uses: providers }),
    tools: [],
    gates: [],
    hooks: [],
    guards: [],
  };
}

/** Allow read; confirm write and external, in the given mode; every loaded caller may show the user a preview (token mode). */
function defaultPolicy(mode: "token" | "platform", callers: readonly string[]): TenantPolicy {
  return {
    rules: [
      { tools: "*", effects: ["read"], decision: "allow" },
      { tools: "*", effects: ["write", "external"], decision: "confirm", mode },
    ],
    trustedConfirmationUis: [...callers],
  };
}

async function readTestPlugin(plugin: TestPlugin, index: number): Promise<ReadyPlugin> {
  if ("dir" in plugin) {
    const folder = await readPluginFolder(path.resolve(plugin.dir));
    if (Array.isArray(folder)) throw manifestInvalid(`plugins[${index}] (folder ${plugin.dir})`, folder);
    return { manifest: folder.manifest, activate: await importActivate(folder) };
  }
  const result: ManifestLoadResult =
    typeof plugin.manifest === "string"
      ? await loadManifest(path.resolve(plugin.manifest))
      : parseManifest(JSON.stringify(plugin.manifest), `plugins[${index}].manifest`);
  if (!result.ok)
    throw manifestInvalid(
      `plugins[${index}]`,
      result.diagnostics.map((diagnostic) => formatDiagnostic(diagnostic)),
    );
  if (plugin.activate !== undefined && typeof plugin.activate !== "function") {
    throw new ToolpactError("MANIFEST_INVALID", `plugins[${index}].activate is not a function: pass the activate(sdk) your plugin's module exports`);
  }
  return { manifest: result.manifest, activate: plugin.activate };
}

function checkUnique(plugins: readonly ReadyPlugin[]): void {
  const seen = new Set<string>([TEST_CALLER_ID]);
  for (const { manifest } of plugins) {
    if (seen.has(manifest.id)) {
      throw new ToolpactError(
        "MANIFEST_INVALID",
        manifest.id === TEST_CALLER_ID
          ? `plugin id "${TEST_CALLER_ID}" is the test host's own caller: give your plugin another id`
          : `plugin "${manifest.id}" is given to createTestHost twice: list each plugin once`,
      );
    }
    seen.add(manifest.id);
  }
}

function manifestInvalid(where: string, problems: readonly string[]): ToolpactError {
  return new ToolpactError("MANIFEST_INVALID", `${where} cannot be loaded; fix these and try again:\n${problems.join("\n")}`);
}
