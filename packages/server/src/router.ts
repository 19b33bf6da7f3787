import { initTRPC } from "@trpc/server";
import { z } from "zod";
import {
  ACTIVITY_CURSOR_MAX_LENGTH,
  CONFIRMATION_TOKEN_MAX_LENGTH,
  ID_MAX_LENGTH,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  MAX_ACTIVITY_PAGE,
  MAX_CONFIRMATION_WAIT_MS,
  OUTBOX_BATCH_MAX,
  OUTBOX_LEASE_MAX_SECONDS,
  PLUGIN_ID_MAX_LENGTH,
  TENANT_ID_MAX_LENGTH,
  TOOL_NAME_MAX_LENGTH,
  ToolpactError,
  toolFullName,
  toolRefOf,
  withoutUndefined,
  type ExecuteOptions,
  type Manifest,
  type ManifestInput,
  type PreviewOptions,
} from "@toolpact/contract";
import type { Activation, ActivityQuery, OutboxClaim, Principal, RecoveryPolicy, RunOptions, Runtime, TenantPolicy, ToolListing } from "@toolpact/runtime";
import { toErrorShape, toPublicError } from "./errors.js";
import { personDeciding, type PresenceSession } from "./presence-session.js";

/** What every procedure gets: the runtime and the request's (not yet checked) credentials. */
export interface ServerContext {
  readonly runtime: Runtime;
  /** Step 1: the principal the request's credentials establish; rejects with UNAUTHENTICATED. */
  readonly authenticate: () => Promise<Principal>;
  /** True only when the request presented the admin key (compared in constant time). */
  readonly authorizeAdmin: () => boolean;
  /**
   * The confirmation page's session (approve/deny): a valid session cookie and its CSRF token, and
   * no plugin key or actor token on the request; rejects with the rule that failed.
   */
  readonly presence: () => Promise<PresenceSession>;
  /** Aborts when the server shuts down: long polls answer early. */
  readonly shutdown: AbortSignal;
}

const t = initTRPC.context<ServerContext>().create({
  isDev: false,
  errorFormatter: ({ error, path }) => toErrorShape(toPublicError(error, { path, procedures: procedurePaths }), path),
});

/** Every procedure's path (`tools.preview`, ...): what "did you mean" picks from. */
function procedurePaths(): Iterable<string> {
  return Object.keys(appRouter._def.procedures);
}

/** Procedures a caller plugin reaches with its plugin key and an actor token. */
const callerProcedure = t.procedure.use(async ({ ctx, next }) => next({ ctx: { principal: await ctx.authenticate() } }));

/** Procedures only the confirmation page's session reaches (never a plugin key or actor token). */
const presenceProcedure = t.procedure.use(async ({ ctx, next }) => next({ ctx: { session: await ctx.presence() } }));

/** Procedures only the admin credential reaches. */
const adminProcedure = t.procedure.use(({ ctx, next }) => {
  if (!ctx.authorizeAdmin()) {
    throw new ToolpactError("UNAUTHENTICATED", "admin procedures need the admin credential: send Authorization: Bearer <admin key> (TOOLPACT_ADMIN_KEY)");
  }
  return next();
});

const toolRefSchema = z.strictObject({
  providerId: z.string().min(1).max(PLUGIN_ID_MAX_LENGTH),
  tool: z.string().min(1).max(TOOL_NAME_MAX_LENGTH),
  version: z.number().int().positive().optional(),
});

const previewSchema = z.strictObject({
  ref: toolRefSchema,
  input: z.unknown(),
  runId: z.string().min(1).max(ID_MAX_LENGTH).optional(),
});

const executeSchema = z.strictObject({
  ...previewSchema.shape,
  confirmationToken: z.string().min(1).max(CONFIRMATION_TOKEN_MAX_LENGTH).optional(),
  idempotencyKey: z.string().min(1).max(IDEMPOTENCY_KEY_MAX_LENGTH).optional(),
});

const pageSchema = {
  limit: z.number().int().min(1).max(MAX_ACTIVITY_PAGE).optional(),
  cursor: z.string().min(1).max(ACTIVITY_CURSOR_MAX_LENGTH).optional(),
};

const tenantId = z.string().min(1).max(TENANT_ID_MAX_LENGTH);
const pluginId = z.string().min(1).max(PLUGIN_ID_MAX_LENGTH);

/**
 * Policy, run and recovery shapes are checked in one place, the runtime (`normalizePolicy`, `openRun`,
 * `normalizeRecoveryPolicy`), with one set of limits: HTTP and in-process callers get the same answers.
 * These schemas only carry the runtime's types to the router's callers.
 */
const policySchema = z.custom<TenantPolicy>();

/** For procedures that take nothing: an input sent anyway is refused rather than silently ignored. */
const noInput = z.undefined({ error: "this procedure takes no input: send none (the caller and user come from the request's credentials)" });

const requestIdInput = z.strictObject({ requestId: z.string().min(1).max(ID_MAX_LENGTH) });

const waitSchema = z.strictObject({
  requestId: z.string().min(1).max(ID_MAX_LENGTH),
  timeoutMs: z.number().int().min(0).max(MAX_CONFIRMATION_WAIT_MS).optional(),
});

const runOpenSchema = z.custom<RunOptions>();

const activationNames = z.array(z.string().min(1).max(TOOL_NAME_MAX_LENGTH)).max(1000);

const activationSchema = z.strictObject({
  tenantId,
  pluginId,
  gates: activationNames.optional(),
  hooks: activationNames.optional(),
  guards: activationNames.optional(),
});

const outboxClaimSchema = z.strictObject({
  tenantId,
  limit: z.number().int().min(1).max(OUTBOX_BATCH_MAX),
  leaseSeconds: z.number().int().min(1).max(OUTBOX_LEASE_MAX_SECONDS),
});

const recoveryPolicySchema = z.custom<RecoveryPolicy>();

/** Compile-time guard: each body schema names exactly the fields of the runtime type it becomes. */
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false;
const bodyKeysMatch: [
  SameKeys<Omit<z.output<typeof activationSchema>, "tenantId" | "pluginId">, Activation>,
  SameKeys<Omit<z.output<typeof outboxClaimSchema>, "tenantId">, OutboxClaim>,
] = [true, true];
void bodyKeysMatch;

/**
 * `tools.manifests`: what `toolpact codegen --from <url>` generates clients from. Each provider this
 * caller may call (installed and enabled for its tenant, within its `uses`, allowed by policy: exactly
 * `tools.list`), as a manifest that declares only those tools. Nothing else of a provider's manifest
 * (its own `uses`, gates, hooks, guards) reaches the caller.
 */
function callerManifests(manifests: ReadonlyMap<string, Manifest>, listing: readonly ToolListing[]): ManifestInput[] {
  const callable = new Map<string, Set<string>>();
  for (const tool of listing) callable.set(tool.providerId, (callable.get(tool.providerId) ?? new Set()).add(tool.fullName));
  return [...callable.keys()].sort().flatMap((providerId) => {
    const manifest = manifests.get(providerId);
    if (manifest === undefined) return [];
    const names = callable.get(providerId)!;
    return [
      withoutUndefined({
        id: manifest.id,
        alias: manifest.alias,
        name: manifest.name,
        description: manifest.description,
        version: manifest.version,
        permissions: ["tools:provide"] as const,
        tools: manifest.tools.filter((tool) => names.has(toolFullName(manifest.id, tool.name, tool.version))),
      }),
    ];
  });
}

/** The tRPC router served at `/trpc`: it translates requests into runtime calls; the runtime decides. */
export const appRouter = t.router({
  tools: t.router({
    list: callerProcedure.input(noInput).query(({ ctx }) => ctx.runtime.listTools(ctx.principal)),
    /** One tool as `tools.list` would list it (without `ref.version`, its highest listed version), or null. */
    find: callerProcedure
      .input(z.strictObject({ ref: toolRefSchema }))
      .query(async ({ ctx, input }) => (await ctx.runtime.findTool(ctx.principal, toolRefOf(input.ref))) ?? null),
    manifests: callerProcedure.input(noInput).query(async ({ ctx }) => callerManifests(ctx.runtime.manifests, await ctx.runtime.listTools(ctx.principal))),
    preview: callerProcedure.input(previewSchema).mutation(({ ctx, input }) => {
      const options: PreviewOptions = input.runId === undefined ? {} : { runId: input.runId };
      return ctx.runtime.preview(ctx.principal, toolRefOf(input.ref), input.input, options);
    }),
    execute: callerProcedure.input(executeSchema).mutation(({ ctx, input }) => {
      const options: ExecuteOptions = withoutUndefined({
        runId: input.runId,
        confirmationToken: input.confirmationToken,
        idempotencyKey: input.idempotencyKey,
      });
      return ctx.runtime.execute(ctx.principal, toolRefOf(input.ref), input.input, options);
    }),
    operation: callerProcedure
      .input(z.strictObject({ operationId: z.string().min(1).max(ID_MAX_LENGTH) }))
      .query(({ ctx, input }) => ctx.runtime.getOperation(ctx.principal, input.operationId)),
  }),
  runs: t.router({
    open: callerProcedure.input(runOpenSchema).mutation(({ ctx, input }) => ctx.runtime.openRun(ctx.principal, input)),
    close: callerProcedure
      .input(z.strictObject({ runId: z.string().min(1).max(ID_MAX_LENGTH) }))
      .mutation(({ ctx, input }) => ctx.runtime.closeRun(ctx.principal, input.runId)),
  }),
  confirmations: t.router({
    get: callerProcedure.input(requestIdInput).query(({ ctx, input }) => ctx.runtime.getConfirmation(ctx.principal, input.requestId)),
    /** One long-poll round: the decision as soon as it is made, else `pending` after at most ~25 s. */
    wait: callerProcedure.input(waitSchema).query(({ ctx, input, signal }) => {
      const aborted = signal === undefined ? ctx.shutdown : AbortSignal.any([signal, ctx.shutdown]);
      return ctx.runtime.waitConfirmation(ctx.principal, input.requestId, withoutUndefined({ timeoutMs: input.timeoutMs, signal: aborted }));
    }),
    cancel: callerProcedure.input(requestIdInput).mutation(({ ctx, input }) => ctx.runtime.cancelConfirmation(ctx.principal, input.requestId)),
    approve: presenceProcedure
      .input(requestIdInput)
      .mutation(({ ctx, input }) => ctx.runtime.decideConfirmation(personDeciding(ctx.session, input.requestId), input.requestId, "approve")),
    deny: presenceProcedure
      .input(requestIdInput)
      .mutation(({ ctx, input }) => ctx.runtime.decideConfirmation(personDeciding(ctx.session, input.requestId), input.requestId, "deny")),
  }),
  activity: t.router({
    list: callerProcedure
      .input(z.strictObject(pageSchema).optional())
      .query(({ ctx, input }) => ctx.runtime.listActivity(ctx.principal, withoutUndefined(input ?? {}) satisfies ActivityQuery)),
  }),
  admin: t.router({
    installPlugin: adminProcedure
      .input(z.strictObject({ tenantId, pluginId }))
      .mutation(({ ctx, input }) => ctx.runtime.admin.installPlugin(input.tenantId, input.pluginId)),
    setPluginEnabled: adminProcedure
      .input(z.strictObject({ tenantId, pluginId, enabled: z.boolean() }))
      .mutation(({ ctx, input }) => ctx.runtime.admin.setPluginEnabled(input.tenantId, input.pluginId, input.enabled)),
    issuePluginKey: adminProcedure
      .input(z.strictObject({ tenantId, pluginId }))
      .mutation(({ ctx, input }) => ctx.runtime.admin.issuePluginKey(input.tenantId, input.pluginId)),
    revokePluginKey: adminProcedure
      .input(z.strictObject({ tenantId, keyId: z.string().min(1).max(ID_MAX_LENGTH) }))
      .mutation(({ ctx, input }) => ctx.runtime.admin.revokePluginKey(input.tenantId, input.keyId)),
    setPolicy: adminProcedure
      .input(z.strictObject({ tenantId, policy: policySchema }))
      .mutation(({ ctx, input }) => ctx.runtime.admin.setPolicy(input.tenantId, input.policy)),
    setActivation: adminProcedure.input(activationSchema).mutation(({ ctx, input }) => {
      const { tenantId: tenant, pluginId: plugin, ...activation } = input;
      return ctx.runtime.admin.setActivation(tenant, plugin, withoutUndefined(activation));
    }),
    setRecoveryPolicy: adminProcedure
      .input(z.strictObject({ tenantId, policy: recoveryPolicySchema }))
      .mutation(({ ctx, input }) => ctx.runtime.admin.setRecoveryPolicy(input.tenantId, input.policy)),
    listActivity: adminProcedure.input(z.strictObject({ tenantId, ...pageSchema })).query(({ ctx, input }) => {
      const { tenantId: tenant, ...query } = input;
      return ctx.runtime.admin.listActivity(tenant, withoutUndefined(query) satisfies ActivityQuery);
    }),
  }),
  outbox: t.router({
    claim: adminProcedure
      .input(outboxClaimSchema)
      .mutation(({ ctx, input }) => ctx.runtime.admin.claimOutbox(input.tenantId, { limit: input.limit, leaseSeconds: input.leaseSeconds })),
    ack: adminProcedure
      .input(z.strictObject({ tenantId, ids: z.array(z.string().min(1).max(ID_MAX_LENGTH)).min(1).max(OUTBOX_BATCH_MAX) }))
      .mutation(({ ctx, input }) => ctx.runtime.admin.ackOutbox(input.tenantId, input.ids)),
  }),
});

/** The router's type, for typed tRPC clients (a type-only import). */
export type AppRouter = typeof appRouter;

/** Makes server-side callers of the router: the in-process transport uses it. */
export const createRouterCaller = t.createCallerFactory(appRouter);
