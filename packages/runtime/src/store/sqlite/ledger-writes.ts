/**
 * The ledger's writes on SQLite, each run inside one transaction of the write queue: the begin (consume
 * a token, take an idempotency key, create the operation), the lease-guarded settle, and a read's
 * operation written once, settled.
 */
import { activityValues, buffer, idempotencyFromRow, operationRowValues, scopeValues, settleValues, tokenFromRow, type Row } from "../rows.js";
import { checkSettleState, checkWrittenSettled, unsettled } from "../refusals.js";
import type {
  ActivityRecord,
  OperationBegin,
  OperationBeginResult,
  OperationRecord,
  OperationSettle,
  OperationSettleResult,
  OutboxRecord,
  SettledOperationResult,
  SettledOperationWrite,
} from "../store.js";
import type { SqliteGrants } from "./grants.js";
import type { SqliteStatements } from "./statements.js";

/**
 * The begin transaction: refuses on a changed config, a live idempotency record, a used token or an ended
 * grant; else counts the grant's use and writes the rows.
 */
export function beginOperation(s: SqliteStatements, grants: SqliteGrants, begin: OperationBegin): OperationBeginResult {
  const op = begin.operation;
  if (op.state !== "running") throw new TypeError(`a new operation starts running, not ${op.state}`);
  if (begin.tenantConfigVersion !== undefined) {
    const version = (s.tenantVersion.get(op.tenantId) as number | undefined) ?? 0;
    if (version !== begin.tenantConfigVersion) return { status: "config-changed", version };
  }
  if (begin.idempotency !== undefined) {
    const scope = begin.idempotency.scope;
    const existing = s.findIdempotencyAny.get(...scopeValues(scope)) as Row | undefined;
    if (existing !== undefined) {
      if (Number(existing.expires_at) > op.createdAt) {
        return { status: "idempotency-exists", record: idempotencyFromRow(existing) };
      }
      s.deleteIdempotency.run(...scopeValues(scope));
    }
  }
  if (begin.consumeToken !== undefined) {
    const used = s.findToken.get(op.tenantId, begin.consumeToken.tokenId) as Row | undefined;
    if (used !== undefined) return { status: "token-used", consumed: tokenFromRow(used) };
  }
  if (begin.useGrant !== undefined) {
    const { tenantId, actorUserId, callerPluginId, createdAt: now } = op;
    if (!grants.use({ ...begin.useGrant, tenantId, actorUserId, callerPluginId, now })) return { status: "grant-ended" };
  }
  if (begin.consumeToken !== undefined) {
    s.insertToken.run(
      op.tenantId,
      begin.consumeToken.tokenId,
      op.operationId,
      op.callerPluginId,
      op.actorUserId,
      begin.consumeToken.consumedAt,
      begin.consumeToken.expiresAt,
    );
  }
  if (begin.idempotency !== undefined) {
    s.insertIdempotency.run(...scopeValues(begin.idempotency.scope), begin.idempotency.inputDigest, op.operationId, op.createdAt, begin.idempotency.expiresAt);
  }
  insertOperation(s, op);
  return { status: "started" };
}

/** A read's The begin and the settle at once: refuses on a changed config; else writes the settled operation with its rows. */
export function recordSettledOperation(s: SqliteStatements, write: SettledOperationWrite): SettledOperationResult {
  const op = write.operation;
  checkWrittenSettled(op);
  if (write.tenantConfigVersion !== undefined) {
    const version = (s.tenantVersion.get(op.tenantId) as number | undefined) ?? 0;
    if (version !== write.tenantConfigVersion) return { status: "config-changed", version };
  }
  insertOperation(s, op);
  insertActivity(s, write.activity);
  if (write.extraActivity !== undefined) for (const event of write.extraActivity) insertActivity(s, event);
  if (write.outbox !== undefined) insertOutbox(s, write.outbox);
  return { status: "recorded" };
}

function insertOperation(s: SqliteStatements, op: OperationRecord): void {
  s.insertOperation.run(...operationRowValues(op), buffer(op.sealedInput));
}

function insertOutbox(s: SqliteStatements, outbox: readonly OutboxRecord[]): void {
  for (const item of outbox) {
    s.insertOutbox.run(item.tenantId, item.id, item.operationId, item.tool, item.hook, item.kind, buffer(item.sealedPayload), item.createdAt);
  }
}

/** The settle: settles the operation under its lease, with its events, outbox rows and idempotency outcome. */
export function settleOperation(s: SqliteStatements, settle: OperationSettle): OperationSettleResult {
  checkSettleState(settle);
  const changes = s.settleOperation.run(...settleValues(settle)).changes;
  if (changes === 0) {
    return unsettled(settle.operationId, s.operationState.get(settle.operationId, settle.tenantId) as string | undefined);
  }
  insertActivity(s, settle.activity);
  if (settle.extraActivity !== undefined) for (const event of settle.extraActivity) insertActivity(s, event);
  if (settle.outbox !== undefined) insertOutbox(s, settle.outbox);
  const idempotency = settle.idempotency;
  if (idempotency !== undefined) {
    const sealed = buffer(idempotency.sealedResult);
    const guardSet = idempotency.guardSet ?? null;
    if (idempotency.scope !== undefined) {
      s.settleIdempotency.run(settle.state, settle.errorCode ?? null, sealed, guardSet, ...scopeValues(idempotency.scope), settle.operationId);
    } else {
      s.settleIdempotencyByOperation.run(settle.state, settle.errorCode ?? null, sealed, guardSet, settle.tenantId, settle.operationId);
    }
  }
  return "settled";
}

/** Records one activity event (in the transaction the caller runs). */
export function insertActivity(s: SqliteStatements, event: ActivityRecord): void {
  s.insertActivity.run(...activityValues(event));
}
