/**
 * The runtime's public surface, as the server (tRPC router, in-process transport) and the CLI use it.
 * Adapters translate to and from this; the runtime decides.
 */
import type {
  ActorInfo,
  ConfirmationStatus,
  Effect,
  ExecuteOptions,
  ExecuteResult,
  Manifest,
  PreviewOptions,
  PreviewResult,
  ToolRef,
} from "@toolpact/contract";
import type { OperationState, SettledOperationState, ToolListing } from "@toolpact/protocol";
import type { AdminViews } from "./admin-views.js";
import type {
  WaitConfirmationOptions,
  ConfirmationPerson,
  PresenceIdentity,
  ConfirmationRequestView,
  ConfirmationDecision,
} from "./confirmation/confirmation-api.js";
import type { CallTraceContext } from "./telemetry/trace-context.js";

export type { CallTraceContext } from "./telemetry/trace-context.js";
import type { GrantChoice } from "./grants/grant-from-request.js";
import type { RuntimeGrants } from "./grants/runtime-grants.js";
import type { RuntimeTasks } from "./tasks/task-api.js";

/**
 * How a call reached the runtime, as recorded on its activity events: the HTTP API (`/trpc`), the MCP
 * bridge (`/mcp`, or `toolpact mcp` forwarding with `X-Toolpact-Via: mcp`), or a plugin in the host's
 * process. A label the transport sets (over HTTP, the caller may choose `mcp`), not an identity.
 */
export type CallerTransport = "http" | "mcp" | "in-process";

/** Who is calling, established by authentication by `Runtime.authenticate` (never from a body or input). */
export interface Principal {
  readonly tenantId: string;
  readonly callerPluginId: string;
  readonly actor: ActorInfo;
  /** Correlates log lines and activity events of one request. */
  readonly correlationId?: string;
  /** How the call arrived (default: in process). */
  readonly via?: CallerTransport;
  /**
   * The id of the plugin key authentication accepted (absent for in-process plugins, which hold none): every
   * call checks it is still live under the tenant config the call is decided under.
   */
  readonly keyId?: string;
  /**
   * What established this principal: a plugin key and an actor token, an OAuth 2.1 access token
   * (docs/oauth.md), or a plugin in the host's process. Recorded on activity; default `in-process`.
   */
  readonly authenticatedBy?: "plugin-key" | "oauth" | "in-process";
  /**
   * The OAuth scopes the access token granted (`tools:read`, `tools:write`, `tools:external`): when
   * present, only tools whose effect's scope is among them are listed or called. Absent: no scope limit.
   */
  readonly scopes?: readonly string[];
  /** The trace the call continues (the caller's `traceparent`), for its spans and the provider's `ctx`; never checked for access. */
  readonly traceContext?: CallTraceContext;
}

/** Credentials as they arrived at the edge: `Authorization: Bearer <plugin key>` and `X-Toolpact-Actor`. */
export interface CallerCredentials {
  readonly pluginKey: string | undefined;
  readonly actorToken: string | undefined;
  /** How the request arrived; recorded on the call's activity events (default `in-process`). */
  readonly via?: CallerTransport;
  /** The caller's W3C trace context (`traceContextOf` checked it), carried onto the principal. */
  readonly traceContext?: CallTraceContext;
}

// What `tools.list` shows a caller is part of the SDK's types (`sdk.tools.list()`), in @toolpact/protocol.
export type { ToolListing } from "@toolpact/protocol";

/** An operation goes `running -> succeeded | failed | unknown`, once (`OPERATION_STATES`, in @toolpact/protocol). */
export type { OperationState } from "@toolpact/protocol";

/** An operation as its own caller and actor may read it. */
export interface OperationView {
  readonly operationId: string;
  readonly tool: string;
  readonly state: OperationState;
  readonly errorCode?: string;
  readonly createdAt: string;
  readonly settledAt?: string;
}

/** What an activity event is about. */
export type ActivityKind = "call" | "confirmation" | "policy" | "recovery" | "hook";
/** Which step of its kind an activity event records. */
export type ActivityPhase = "preview" | "execute" | "approve" | "deny" | "expire" | "cancel" | "settle" | "change" | "shadow";
/** How the recorded step ended: a call as its operation settled (or previewed, or denied), a confirmation as decided. */
export type ActivityOutcome = "previewed" | SettledOperationState | "denied" | "approved" | "expired" | ShadowOutcome;
/** What a tenant's shadow policy would have decided on a call where it disagrees with the live one (phase `shadow`). */
export type ShadowOutcome = "allow" | "confirm" | "deny";

/** One activity event. Never raw input or output, never a provider's message. */
export interface ActivityEvent {
  readonly id: string;
  readonly tenantId: string;
  readonly at: string;
  readonly kind: ActivityKind;
  readonly actorUserId?: string;
  readonly callerPluginId?: string;
  readonly providerPluginId?: string;
  readonly tool?: string;
  readonly version?: number;
  readonly effect?: Effect;
  readonly phase: ActivityPhase;
  readonly outcome: ActivityOutcome;
  readonly errorCode?: string;
  readonly errorClass?: string;
  readonly operationId?: string;
  readonly confirmationId?: string;
  readonly targetId?: string;
  readonly durationMs?: number;
  readonly correlationId?: string;
  /** The gate, hook or guard an event is about, `<pluginId>:<name>` (gate blocks, hook failures, guard withholds). */
  readonly seam?: string;
  /** How a caller's call arrived: `http`, `mcp` or `in-process` (calls only). */
  readonly via?: CallerTransport;
  /** How the caller was authenticated (calls only): its plugin key, OAuth, or in process. */
  readonly authenticatedBy?: "plugin-key" | "oauth" | "in-process";
  /** How the call was confirmed: a confirmation token, the platform's confirmation page, or an MCP approval. */
  readonly confirmation?: ActivityConfirmation;
  /** Who confirmed the call: the user who approved it. */
  readonly confirmedBy?: string;
  /** The provider's manifest version (its `plugin.json` `version`), when the call resolved a tool. */
  readonly manifestVersion?: string;
  /** The resolved tool's schema hash. */
  readonly schemaHash?: string;
  /** What the tenant's policy decided for the call: `allow`, `confirm` or `deny`. */
  readonly policyDecision?: PolicyDecisionName;
  /** SHA-256 (base64url) of the call's idempotency key, as the idempotency record keeps it; never the key itself. */
  readonly idempotencyKeyHash?: string;
  /** The user grant that authorized a call in place of a confirmation; on a `grant` event, the grant it records. */
  readonly grantId?: string;
}

/** How a call was confirmed: a confirmation token, the platform's confirmation page, or an MCP approval. */
export type ActivityConfirmation = "token" | "platform-page" | "mcp-approval";
/** A policy decision as the activity log records it. */
export type PolicyDecisionName = "allow" | "confirm" | "deny";

/** One page request of `listActivity`. */
export interface ActivityQuery {
  readonly limit?: number;
  /** Opaque cursor from the previous page's `nextCursor`. */
  readonly cursor?: string;
}

/** One page of activity, newest first; `nextCursor` when there is more. */
export interface ActivityPage {
  readonly events: readonly ActivityEvent[];
  readonly nextCursor?: string;
}

/** One rule of a tenant policy. Matching: every given field must match; omitted fields match anything. */
export interface PolicyRule {
  readonly tools: string;
  readonly callers?: readonly string[];
  readonly users?: readonly string[];
  readonly roles?: readonly string[];
  readonly effects?: readonly Effect[];
  readonly decision: "allow" | "deny" | "confirm";
  /** For `confirm`/`allow` of confirmable tools: which confirmation mode; token mode needs a trusted UI caller. */
  readonly mode?: "token" | "platform";
  /** Raises (never lowers) the verification level the actor needs, 0..3. */
  readonly minVerificationLevel?: number;
  /**
   * Lets the signed-in user approve a grant on the confirmation page for the calls this rule matches (off
   * when absent): at most `maxCalls` calls and/or `maxSeconds` seconds. A tool whose declaration requires
   * confirmation gets grants only from a rule that names it without a wildcard.
   */
  readonly grants?: GrantLimits;
}

/** The most a grant may allow, as a policy rule bounds it: at least one of the two. */
export interface GrantLimits {
  /** 1..GRANT_MAX_CALLS calls. */
  readonly maxCalls?: number;
  /** 1..GRANT_MAX_SECONDS seconds from the grant's creation. */
  readonly maxSeconds?: number;
}

/** A verification level floor per effect class, 0..3 (tightens tool declarations, never loosens them). */
export interface EffectVerificationLevels {
  readonly read?: number;
  readonly write?: number;
  readonly external?: number;
}

/** A tenant's policy: deny > confirm > allow; no matching rule = deny. */
export interface TenantPolicy {
  readonly rules: readonly PolicyRule[];
  /** Callers the tenant trusts to show the user a preview and confirm (token mode). */
  readonly trustedConfirmationUis?: readonly string[];
  /** The least verification level the actor needs, per effect class. */
  readonly minVerificationLevel?: EffectVerificationLevels;
  /**
   * Narrows where gates, hooks and guards act: `"<pluginId>:<name>" -> tool patterns`; the effective
   * `appliesTo` is the declared one intersected with these patterns.
   */
  readonly narrow?: Readonly<Record<string, readonly string[]>>;
  /**
   * A proposed policy tried beside this one: decided on every call, never enforced; each call where it decides
   * otherwise is recorded as an activity event (kind `policy`, phase `shadow`, outcome its decision).
   */
  readonly shadow?: Omit<TenantPolicy, "shadow">;
}

/** What `openRun` takes: the tool patterns the run allows, and how long it lives. */
export interface RunOptions {
  /** Tool patterns (`"*"`, `"<pluginId>:*"`, `"<pluginId>:<tool>"`, `"<pluginId>:<tool>@<version>"`). */
  readonly allow: readonly string[];
  /** 1 s to 7 days. */
  readonly ttlSeconds: number;
}

/** An open run, bound to (tenant, caller, actor). */
export interface RunHandle {
  readonly runId: string;
  readonly expiresAt: string;
}

export type {
  WaitConfirmationOptions,
  ConfirmationAttestation,
  ConfirmationPerson,
  PresenceIdentity,
  ConfirmationRequestState,
  ConfirmationRequestView,
  ConfirmationDecision,
} from "./confirmation/confirmation-api.js";

/** Which declared gates, hooks and guards of one plugin act for a tenant. */
export interface Activation {
  readonly gates?: readonly string[];
  readonly hooks?: readonly string[];
  readonly guards?: readonly string[];
}

/** One rule of a tenant's pinned recovery policy. */
export interface RecoveryRule {
  /** Tool pattern. */
  readonly tools: string;
  /** `reinvoke`: an expired operation of a `recovery: "idempotent"` tool is invoked again with the same operation id. */
  readonly retry: "none" | "reinvoke";
  /** How many re-invocations at most (default 1). */
  readonly maxAttempts?: number;
}

/** A tenant's pinned recovery policy: a matching `none` rule wins over `reinvoke`; no matching rule = none. */
export interface RecoveryPolicy {
  readonly rules: readonly RecoveryRule[];
}

/** What `claimOutbox` takes. */
export interface OutboxClaim {
  /** 1..1000 items. */
  readonly limit: number;
  /** How long the claim holds before the items may be claimed again, 1..3600 s. */
  readonly leaseSeconds: number;
}

/** One staged reaction of an AfterTool hook, committed with its operation. */
export interface OutboxItem {
  readonly id: string;
  readonly tenantId: string;
  readonly kind: string;
  readonly payload: unknown;
  /** The hook that staged it, `<pluginId>:<name>`. */
  readonly hook: string;
  readonly operationId: string;
  /** The tool the operation called (full name). */
  readonly tool: string;
  readonly createdAt: string;
  /** How many times it was claimed, this claim included. */
  readonly attempts: number;
  readonly claimedUntil: string;
}

/** Admin operations; the admin credential is checked by the server before these are called. */
export interface RuntimeAdmin {
  installPlugin(tenantId: string, pluginId: string): Promise<void>;
  setPluginEnabled(tenantId: string, pluginId: string, enabled: boolean): Promise<void>;
  issuePluginKey(tenantId: string, pluginId: string): Promise<{ keyId: string; key: string }>;
  revokePluginKey(tenantId: string, keyId: string): Promise<void>;
  setPolicy(tenantId: string, policy: TenantPolicy): Promise<void>;
  /**
   * Activates the named (declared) gates, hooks and guards of a plugin for a tenant, replacing that
   * plugin's previous activation. @throws CAPABILITY_UNDECLARED listing every name the plugin does not declare.
   */
  setActivation(tenantId: string, pluginId: string, activation: Activation): Promise<void>;
  /** Pins the tenant's recovery policy. @throws ToolpactError listing every rule that would exceed a tool's declared recovery. */
  setRecoveryPolicy(tenantId: string, policy: RecoveryPolicy): Promise<void>;
  /** Claims staged hook reactions for delivery; unacknowledged ones come back after the lease. */
  claimOutbox(tenantId: string, claim: OutboxClaim): Promise<OutboxItem[]>;
  /** Acknowledges delivered reactions (they are deleted). */
  ackOutbox(tenantId: string, ids: readonly string[]): Promise<void>;
  /** A whole tenant's activity, newest first, for the tenant's admin. */
  listActivity(tenantId: string, query?: ActivityQuery): Promise<ActivityPage>;
  /** What the operator console shows: filtered activity, operation stories, pending requests, plugins, policy, key ages. */
  readonly views: AdminViews;
}

/** Tells listeners when what a tenant's callers may list may have changed. */
export interface ToolChanges {
  /**
   * Calls `listener` with a tenant's id when its config moved (installs, enablement, policy,
   * activations, keys): this runtime's changes at once, other instances' as soon as the store hears them;
   * with `undefined` when changes may have gone unheard (every tenant may have changed). Returns the unsubscribe.
   */
  subscribe(listener: (tenantId: string | undefined) => void): () => void;
  /** True while other instances' changes are heard as they commit; while false, a listener should also poll. */
  hearsOthers(): boolean;
}

/** The runtime core. Every call after `authenticate` takes the principal it established. */
export interface Runtime {
  /** Authentication: a plugin key bound to (tenant, plugin) and an actor token for that tenant and caller. */
  authenticate(credentials: CallerCredentials): Promise<Principal>;
  listTools(principal: Principal): Promise<readonly ToolListing[]>;
  /**
   * The entry `listTools` would list for one tool (without `ref.version`, its highest listed version);
   * undefined when it lists no such tool. What resolving one tool for a call costs: that tool, not the catalogue.
   */
  findTool(principal: Principal, ref: ToolRef): Promise<ToolListing | undefined>;
  preview(principal: Principal, ref: ToolRef, input: unknown, options?: PreviewOptions): Promise<PreviewResult>;
  execute(principal: Principal, ref: ToolRef, input: unknown, options?: ExecuteOptions): Promise<ExecuteResult>;
  getOperation(principal: Principal, operationId: string): Promise<OperationView>;
  /** The caller's own calls for its actor, newest first: never what the user did through other plugins. */
  listActivity(principal: Principal, query?: ActivityQuery): Promise<ActivityPage>;

  /** Opens a run bound to the principal's (tenant, caller, actor): calls passing its id may use only `allow`. */
  openRun(principal: Principal, options: RunOptions): Promise<RunHandle>;
  /** Closes the principal's own run; calls with its id are then RUN_DENIED. */
  closeRun(principal: Principal, runId: string): Promise<void>;
  /** The status of a platform-mode confirmation request, for the caller and actor it was made for. */
  getConfirmation(principal: Principal, requestId: string): Promise<ConfirmationStatus>;
  /** Like `getConfirmation`, but answers as soon as the request is decided, or `pending` at the timeout. */
  waitConfirmation(principal: Principal, requestId: string, options?: WaitConfirmationOptions): Promise<ConfirmationStatus>;
  /** Withdraws a pending request. */
  cancelConfirmation(principal: Principal, requestId: string): Promise<void>;
  /**
   * The confirmation page's sign-in: a presence token (JWT, aud "toolpact-presence", at most 600 s, with a
   * `jti`). A token signs in once: its use is recorded in the store, and a second use is UNAUTHENTICATED.
   */
  verifyPresenceToken(token: string): Promise<PresenceIdentity>;
  /** A request as the confirmation page shows it; only for the actor it is for. */
  describeConfirmation(person: ConfirmationPerson, requestId: string): Promise<ConfirmationRequestView>;
  /**
   * Approves or denies a pending request; only by the actor it is for. With `grant`, an approval also makes a user
   * grant for the next calls like it, within the limits the policy allowed when the request was made.
   */
  decideConfirmation(person: ConfirmationPerson, requestId: string, decision: "approve" | "deny", grant?: GrantChoice): Promise<ConfirmationDecision>;
  /** Settles operations whose lease expired (a crashed or stuck instance); returns how many were settled. */
  settleExpiredLeases(): Promise<number>;

  readonly admin: RuntimeAdmin;
  /** Tool calls as tasks whose state lives in the store (MCP's `io.modelcontextprotocol/tasks`). */
  readonly tasks: RuntimeTasks;
  /** The signed-in user's grants (list, revoke) and whether one may cover a call; grants are made only by `decideConfirmation`. */
  readonly grants: RuntimeGrants;
  /** Signals that tenants' tool listings may have changed (what MCP's `notifications/tools/list_changed` follows). */
  readonly toolChanges: ToolChanges;
  /** The manifests of plugins loaded into this host. */
  readonly manifests: ReadonlyMap<string, Manifest>;
  /** True when the store answers; `/readyz` uses it. */
  ready(): Promise<boolean>;
  /** Drain in-flight calls, stop timers, close the store. */
  close(): Promise<void>;
}
