/**
 * The runtime's public surface, as the server (tRPC router, in-process transport) and the CLI use it.
 * Adapters translate to and from this; the runtime decides.
 */
import type {
  ActorInfo,
  Effect,
  ExecuteOptions,
  ExecuteResult,
  Manifest,
  PreviewOptions,
  PreviewResult,
  ToolRef,
} from "@toolpact/contract";

/** Who is calling, established at step 1 by `Runtime.authenticate` (never from a body or input). */
export interface Principal {
  readonly tenantId: string;
  readonly callerPluginId: string;
  readonly actor: ActorInfo;
  /** Correlates log lines and activity events of one request. */
  readonly correlationId?: string;
}

/** Credentials as they arrived at the edge: `Authorization: Bearer <plugin key>` and `X-Toolpact-Actor`. */
export interface CallerCredentials {
  readonly pluginKey: string | undefined;
  readonly actorToken: string | undefined;
}

/** A tool as `tools.list` shows it to a caller. */
export interface ToolListing {
  readonly providerId: string;
  readonly name: string;
  readonly version: number;
  readonly fullName: string;
  readonly title?: string;
  readonly description?: string;
  readonly effect: Effect;
  readonly requiresConfirmation: boolean;
  readonly minVerificationLevel: number;
  readonly inputSchema: unknown;
  readonly outputSchema?: unknown;
}

/** An operation goes `running -> succeeded | failed | unknown`, once. */
export type OperationState = "running" | "succeeded" | "failed" | "unknown";

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
export type ActivityPhase = "preview" | "execute" | "approve" | "deny" | "expire" | "settle" | "change";
/** How the recorded step ended. */
export type ActivityOutcome =
  | "previewed"
  | "succeeded"
  | "failed"
  | "denied"
  | "unknown"
  | "approved"
  | "expired";

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
}

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
}

/** A tenant's policy: deny > confirm > allow; no matching rule = deny. */
export interface TenantPolicy {
  readonly rules: readonly PolicyRule[];
  /** Callers the tenant trusts to show the user a preview and confirm (token mode). */
  readonly trustedConfirmationUis?: readonly string[];
}

/** Admin operations; the admin credential is checked by the server before these are called. */
export interface RuntimeAdmin {
  installPlugin(tenantId: string, pluginId: string): Promise<void>;
  setPluginEnabled(tenantId: string, pluginId: string, enabled: boolean): Promise<void>;
  issuePluginKey(tenantId: string, pluginId: string): Promise<{ keyId: string; key: string }>;
  revokePluginKey(tenantId: string, keyId: string): Promise<void>;
  setPolicy(tenantId: string, policy: TenantPolicy): Promise<void>;
  /** A whole tenant's activity, newest first, for the tenant's admin. */
  listActivity(tenantId: string, query?: ActivityQuery): Promise<ActivityPage>;
}

/** The runtime core. Every call after `authenticate` takes the principal it established. */
export interface Runtime {
  /** Step 1: a plugin key bound to (tenant, plugin) and an actor token for that tenant and caller. */
  authenticate(credentials: CallerCredentials): Promise<Principal>;
  listTools(principal: Principal): Promise<readonly ToolListing[]>;
  preview(principal: Principal, ref: ToolRef, input: unknown, options?: PreviewOptions): Promise<PreviewResult>;
  execute(principal: Principal, ref: ToolRef, input: unknown, options?: ExecuteOptions): Promise<ExecuteResult>;
  getOperation(principal: Principal, operationId: string): Promise<OperationView>;
  listActivity(principal: Principal, query?: ActivityQuery): Promise<ActivityPage>;
  readonly admin: RuntimeAdmin;
  /** The manifests of plugins loaded into this host. */
  readonly manifests: ReadonlyMap<string, Manifest>;
  /** True when the store answers; `/readyz` uses it. */
  ready(): Promise<boolean>;
  /** Drain in-flight calls, stop timers, close the store. */
  close(): Promise<void>;
}
