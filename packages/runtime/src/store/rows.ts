/**
 * Rows to records and records to statement values, shared by the SQLite and PostgreSQL stores. The
 * mappers take either driver's rows: PostgreSQL answers bigint columns as strings, lists as arrays and
 * bytea as Buffers; SQLite answers numbers, lists as JSON text and BLOBs as Buffers. NULL becomes an
 * absent property, as exact optional types want.
 */
import type { ActivityKind, ActivityOutcome, ActivityPhase, OperationState } from "../api.js";
import type {
  ActivationRecord,
  ActivityRecord,
  ConfirmationBindingQuery,
  ConfirmationRecord,
  ConfirmationState,
  ConsumedTokenRecord,
  IdempotencyRecord,
  IdempotencyScope,
  OperationRecord,
  OperationSettle,
  OutboxRecord,
  PluginInstallRecord,
  PluginKeyLookup,
  PluginKeyRecord,
  RunRecord,
  TenantConfigRecord,
} from "./store.js";

/** A row as either driver answers it. */
export type Row = Record<string, unknown>;

/** A nullable text column. */
export const str = (value: unknown): string | undefined => (value === null || value === undefined ? undefined : String(value));
/** A nullable number column (PostgreSQL's bigint arrives as a string). */
export const num = (value: unknown): number | undefined => (value === null || value === undefined ? undefined : Number(value));
/** A nullable byte column. */
export const bytes = (value: unknown): Uint8Array | undefined => (value instanceof Uint8Array ? value : undefined);
/** A list column: PostgreSQL's array as it comes, SQLite's JSON text parsed; NULL is the empty list. */
export const list = (value: unknown): string[] =>
  Array.isArray(value) ? (value as string[]) : value === null || value === undefined ? [] : (JSON.parse(String(value)) as string[]);
/** A byte view as a Buffer over the same memory, to bind as a BLOB or bytea without copying; NULL when absent. */
export const buffer = (value: Uint8Array | undefined): Buffer | null =>
  value === undefined ? null : Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);

/** Copies the defined properties of `value` (rows map NULL to absent, as exact optional types want). */
export function defined<T extends object>(value: { [K in keyof T]: T[K] | undefined }): T {
  const out: Record<string, unknown> = {};
  for (const key in value) if (value[key] !== undefined) out[key] = value[key];
  return out as T;
}

/** An idempotency scope in key order: tenant, caller, actor, tool, key hash. */
export function scopeValues(scope: IdempotencyScope): [string, string, string, string, string] {
  return [scope.tenantId, scope.callerPluginId, scope.actorUserId, scope.tool, scope.keyHash];
}

/** The activity columns, in the order of `activityValues`. */
export const ACTIVITY_COLUMNS =
  "tenant_id, id, at, kind, actor_user_id, caller_plugin_id, provider_plugin_id, tool, version, effect, phase, outcome, " +
  "error_code, error_class, operation_id, confirmation_id, target_id, duration_ms, correlation_id, seam, via, " +
  "authenticated_by, confirmation, confirmed_by, manifest_version, schema_hash, policy_decision, idempotency_key_hash, grant_id";

/**
 * An operation's values from its id to its lease, as both stores write a whole row: operation_id,
 * tenant_id, caller_plugin_id, actor_user_id, provider_plugin_id, tool, state, error_code, created_at,
 * settled_at, lease_owner, lease_epoch, lease_expires_at (absent properties as NULL; the sealed input is not among them).
 */
export function operationRowValues(op: OperationRecord): unknown[] {
  return [
    op.operationId,
    op.tenantId,
    op.callerPluginId,
    op.actorUserId,
    op.providerPluginId,
    op.tool,
    op.state,
    op.errorCode ?? null,
    op.createdAt,
    op.settledAt ?? null,
    op.leaseOwner,
    op.leaseEpoch,
    op.leaseExpiresAt,
  ];
}

/** An event's values in the order of `ACTIVITY_COLUMNS`, absent properties as NULL. */
export function activityValues(event: ActivityRecord): unknown[] {
  return [
    event.tenantId,
    event.id,
    event.at,
    event.kind,
    event.actorUserId ?? null,
    event.callerPluginId ?? null,
    event.providerPluginId ?? null,
    event.tool ?? null,
    event.version ?? null,
    event.effect ?? null,
    event.phase,
    event.outcome,
    event.errorCode ?? null,
    event.errorClass ?? null,
    event.operationId ?? null,
    event.confirmationId ?? null,
    event.targetId ?? null,
    event.durationMs ?? null,
    event.correlationId ?? null,
    event.seam ?? null,
    event.via ?? null,
    event.authenticatedBy ?? null,
    event.confirmation ?? null,
    event.confirmedBy ?? null,
    event.manifestVersion ?? null,
    event.schemaHash ?? null,
    event.policyDecision ?? null,
    event.idempotencyKeyHash ?? null,
    event.grantId ?? null,
  ];
}

/** A settle's values for its lease-guarded update: state, error code, settled at, operation, tenant, lease owner, lease epoch. */
export function settleValues(settle: OperationSettle): unknown[] {
  return [settle.state, settle.errorCode ?? null, settle.settledAt, settle.operationId, settle.tenantId, settle.leaseOwner, settle.leaseEpoch];
}

/** A new confirmation request's values: its columns from tenant_id to expires_at except status, then the sealed preview. */
export function confirmationValues(record: ConfirmationRecord): unknown[] {
  return [
    record.tenantId,
    record.requestId,
    record.tool,
    record.providerPluginId,
    record.callerPluginId,
    record.actorUserId,
    record.digest,
    record.digestKid,
    record.schemaHash,
    record.effect,
    record.mode,
    record.runId ?? null,
    record.createdAt,
    record.expiresAt,
    buffer(record.sealedPreview),
  ];
}

/**
 * The fields a platform request is bound by, with their columns: the one list both stores'
 * `findOpenConfirmation` statements and their parameters derive from (`runId` may be null).
 */
export const CONFIRMATION_BINDING_COLUMNS = Object.freeze([
  ["tenantId", "tenant_id"],
  ["callerPluginId", "caller_plugin_id"],
  ["actorUserId", "actor_user_id"],
  ["digest", "digest"],
  ["tool", "tool"],
  ["schemaHash", "schema_hash"],
  ["digestKid", "digest_kid"],
  ["runId", "run_id"],
] as const satisfies readonly (readonly [Exclude<keyof ConfirmationBindingQuery, "now">, string])[]);

/**
 * `findOpenConfirmation`'s statement: `match(column, index)` writes one binding column's condition (its
 * parameter is `index`, from 0), and `now(index)` the parameter of the time after them.
 */
export function openConfirmationSql(match: (column: string, index: number) => string, now: (index: number) => string): string {
  const bound = CONFIRMATION_BINDING_COLUMNS.map(([, column], index) => match(column, index)).join(" AND ");
  const at = now(CONFIRMATION_BINDING_COLUMNS.length);
  return `SELECT * FROM confirmation_requests
     WHERE ${bound} AND status IN ('pending', 'approved')
       AND ((status = 'approved' AND token_expires_at > ${at}) OR (status = 'pending' AND expires_at > ${at}))
     ORDER BY status = 'approved' DESC, created_at DESC LIMIT 1`;
}

/** What `findOpenConfirmation` looks for, in its statements' parameter order: the binding, then `now`. */
export function openConfirmationValues(query: ConfirmationBindingQuery): unknown[] {
  return [...CONFIRMATION_BINDING_COLUMNS.map(([field]) => query[field] ?? null), query.now];
}

/** A tenant's configuration from its `tenants` row (absent for a tenant never configured) and what was read besides it. */
export function tenantConfigFromRow(
  row: Row | undefined,
  read: { tenantId: string; version: number; plugins: PluginInstallRecord[]; activations: ActivationRecord[] },
): TenantConfigRecord {
  return defined<TenantConfigRecord>({
    tenantId: read.tenantId,
    version: read.version,
    plugins: read.plugins,
    policy: str(row?.policy),
    recoveryPolicy: str(row?.recovery_policy),
    activations: read.activations,
  });
}

/** A `plugin_keys` row with its tenant's config version (`tenant_config_version`). */
export function pluginKeyLookupFromRow(row: Row): PluginKeyLookup {
  return { ...pluginKeyFromRow(row), tenantConfigVersion: Number(row.tenant_config_version ?? 0) };
}

/** A `plugin_keys` row. */
export function pluginKeyFromRow(row: Row): PluginKeyRecord {
  return defined<PluginKeyRecord>({
    keyId: String(row.key_id),
    tenantId: String(row.tenant_id),
    pluginId: String(row.plugin_id),
    keyHash: bytes(row.key_hash) ?? new Uint8Array(),
    createdAt: Number(row.created_at),
    revokedAt: num(row.revoked_at),
  });
}

/** An `operations` row. */
export function operationFromRow(row: Row): OperationRecord {
  return defined<OperationRecord>({
    tenantId: String(row.tenant_id),
    operationId: String(row.operation_id),
    callerPluginId: String(row.caller_plugin_id),
    actorUserId: String(row.actor_user_id),
    providerPluginId: String(row.provider_plugin_id),
    tool: String(row.tool),
    state: String(row.state) as OperationState,
    errorCode: str(row.error_code),
    createdAt: Number(row.created_at),
    settledAt: num(row.settled_at),
    leaseOwner: String(row.lease_owner),
    leaseEpoch: Number(row.lease_epoch),
    leaseExpiresAt: Number(row.lease_expires_at),
    sealedInput: bytes(row.sealed_input),
    recoveryAttempts: num(row.recovery_attempts),
  });
}

/** A `runs` row. */
export function runFromRow(row: Row): RunRecord {
  return defined<RunRecord>({
    tenantId: String(row.tenant_id),
    runId: String(row.run_id),
    callerPluginId: String(row.caller_plugin_id),
    actorUserId: String(row.actor_user_id),
    allow: list(row.allow),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    closedAt: num(row.closed_at),
  });
}

/** A `confirmation_requests` row. */
export function confirmationFromRow(row: Row): ConfirmationRecord {
  return defined<ConfirmationRecord>({
    tenantId: String(row.tenant_id),
    requestId: String(row.request_id),
    tool: String(row.tool),
    providerPluginId: String(row.provider_plugin_id),
    callerPluginId: String(row.caller_plugin_id),
    actorUserId: String(row.actor_user_id),
    digest: String(row.digest),
    digestKid: String(row.digest_kid),
    schemaHash: String(row.schema_hash),
    effect: String(row.effect) as ConfirmationRecord["effect"],
    mode: "platform",
    runId: str(row.run_id),
    status: String(row.status) as ConfirmationState,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    decidedAt: num(row.decided_at),
    sealedPreview: bytes(row.sealed_preview),
    tokenExpiresAt: num(row.token_expires_at),
  });
}

/** An `outbox` row. */
export function outboxFromRow(row: Row): OutboxRecord {
  return defined<OutboxRecord>({
    tenantId: String(row.tenant_id),
    id: String(row.id),
    operationId: String(row.operation_id),
    tool: String(row.tool),
    hook: String(row.hook),
    kind: String(row.kind),
    sealedPayload: bytes(row.sealed_payload) ?? new Uint8Array(),
    createdAt: Number(row.created_at),
    attempts: Number(row.attempts),
    claimedUntil: num(row.claimed_until),
  });
}

/** An `idempotency_keys` row. */
export function idempotencyFromRow(row: Row): IdempotencyRecord {
  return defined<IdempotencyRecord>({
    tenantId: String(row.tenant_id),
    callerPluginId: String(row.caller_plugin_id),
    actorUserId: String(row.actor_user_id),
    tool: String(row.tool),
    keyHash: String(row.key_hash),
    inputDigest: String(row.input_digest),
    operationId: String(row.operation_id),
    state: String(row.state) as OperationState,
    errorCode: str(row.error_code),
    sealedResult: bytes(row.sealed_result),
    guardSet: str(row.guard_set),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  });
}

/** A `consumed_tokens` row. */
export function tokenFromRow(row: Row): ConsumedTokenRecord {
  return {
    tenantId: String(row.tenant_id),
    tokenId: String(row.token_id),
    operationId: String(row.operation_id),
    callerPluginId: String(row.caller_plugin_id),
    actorUserId: String(row.actor_user_id),
    consumedAt: Number(row.consumed_at),
    expiresAt: Number(row.expires_at),
  };
}

/** An `activity` row. */
export function activityFromRow(row: Row): ActivityRecord {
  return defined<ActivityRecord>({
    id: String(row.id),
    tenantId: String(row.tenant_id),
    at: Number(row.at),
    kind: String(row.kind) as ActivityKind,
    actorUserId: str(row.actor_user_id),
    callerPluginId: str(row.caller_plugin_id),
    providerPluginId: str(row.provider_plugin_id),
    tool: str(row.tool),
    version: num(row.version),
    effect: str(row.effect) as ActivityRecord["effect"],
    phase: String(row.phase) as ActivityPhase,
    outcome: String(row.outcome) as ActivityOutcome,
    errorCode: str(row.error_code),
    errorClass: str(row.error_class),
    operationId: str(row.operation_id),
    confirmationId: str(row.confirmation_id),
    targetId: str(row.target_id),
    durationMs: num(row.duration_ms),
    correlationId: str(row.correlation_id),
    seam: str(row.seam),
    via: str(row.via) as ActivityRecord["via"],
    authenticatedBy: str(row.authenticated_by) as ActivityRecord["authenticatedBy"],
    confirmation: str(row.confirmation) as ActivityRecord["confirmation"],
    confirmedBy: str(row.confirmed_by),
    manifestVersion: str(row.manifest_version),
    schemaHash: str(row.schema_hash),
    policyDecision: str(row.policy_decision) as ActivityRecord["policyDecision"],
    idempotencyKeyHash: str(row.idempotency_key_hash),
    grantId: str(row.grant_id),
  });
}
