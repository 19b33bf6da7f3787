/**
 * The ledger's writes on PostgreSQL, each one statement and so its own transaction: the begin (consume a
 * token, take an idempotency key, create the operation), the lease-guarded settle, and a read's operation
 * written once, settled.
 */
import { ToolpactError } from "@toolpact/contract";
import { checkSettleState, checkWrittenSettled, storeClosed, unsettled } from "../refusals.js";
import { activityValues, buffer, idempotencyFromRow, scopeValues, settleValues, tokenFromRow } from "../rows.js";
import type {
  OperationBegin,
  OperationBeginResult,
  OperationRecord,
  OperationSettle,
  OperationSettleResult,
  SettledOperationResult,
  SettledOperationWrite,
} from "../store.js";
import type { PostgresConnection } from "./connection.js";
import { hasCode } from "./errors.js";
import { BEGIN_STATEMENTS, GRANT_ENDED_REFUSAL, RECORD_STATEMENTS, SETTLE_STATEMENTS, outboxRow, type SettleKey } from "./ledger-statements.js";
import { REFUSED_SQLSTATE } from "./migrations.js";
import { S, type Statement } from "./statements.js";

/** Which steps of one begin wrote a row, and the tenant's config version when it was checked. */
interface BeginFlags {
  readonly cfg: number;
  readonly idem: number;
  readonly tok: number;
  readonly grnt: number;
  readonly op: number;
}

/** The begin transaction as one statement; a refusal is answered with the row that caused it. */
export async function beginOperation(db: PostgresConnection, begin: OperationBegin): Promise<OperationBeginResult> {
  const op = begin.operation;
  if (op.state !== "running") throw new TypeError(`a new operation starts running, not ${op.state}`);
  if (db.closed) throw storeClosed();
  const values = operationValues(op);
  const { consumeToken: token, idempotency, tenantConfigVersion, useGrant: grant } = begin;
  if (token !== undefined) values.push(token.tokenId, token.consumedAt, token.expiresAt);
  if (idempotency !== undefined) values.push(...scopeValues(idempotency.scope), idempotency.inputDigest, idempotency.expiresAt);
  if (tenantConfigVersion !== undefined) values.push(tenantConfigVersion);
  if (grant !== undefined) values.push(grant.grantId, grant.tool, grant.version, grant.schemaHash);
  const shape =
    (grant !== undefined ? 8 : 0) + (tenantConfigVersion !== undefined ? 4 : 0) + (idempotency !== undefined ? 2 : 0) + (token !== undefined ? 1 : 0);
  const query = BEGIN_STATEMENTS[shape]!;

  // A refusal is answered with the row that caused it; if that row vanished meanwhile (pruned, or an
  // expired key replaced), the begin is tried again.
  for (let attempt = 0; attempt < 3; attempt++) {
    const flags = await runBegin(db, { query, values, configVersion: tenantConfigVersion ?? 0 });
    if (flags.op === 1) return { status: "started" };
    if (tenantConfigVersion !== undefined && flags.cfg !== tenantConfigVersion) {
      return { status: "config-changed", version: flags.cfg };
    }
    if (flags.idem === 0 && idempotency !== undefined) {
      const [row] = await db.rows("could not read an idempotency record", S.findIdempotencyAny, scopeValues(idempotency.scope));
      if (row !== undefined && Number(row.expires_at) > op.createdAt) {
        return { status: "idempotency-exists", record: idempotencyFromRow(row) };
      }
    } else if (flags.tok === 0 && token !== undefined) {
      const [row] = await db.rows("could not read a consumed token id", S.findToken, [op.tenantId, token.tokenId]);
      if (row !== undefined) return { status: "token-used", consumed: tokenFromRow(row) };
    } else if (flags.grnt === 0 && grant !== undefined) {
      return { status: "grant-ended" };
    }
  }
  throw new ToolpactError(
    "CONCURRENT_CHANGE",
    `operation ${op.operationId} could not begin: the token or idempotency record it conflicted with kept changing; try again`,
  );
}

/** An operation's values as a begin or a record binds them ($1..$12; the state is the statement's to set). */
function operationValues(op: OperationRecord): unknown[] {
  return [
    op.operationId,
    op.tenantId,
    op.callerPluginId,
    op.actorUserId,
    op.providerPluginId,
    op.tool,
    op.errorCode ?? null,
    op.createdAt,
    op.leaseOwner,
    op.leaseEpoch,
    op.leaseExpiresAt,
    buffer(op.sealedInput),
  ];
}

/** Runs one begin statement and reads which of its steps wrote a row. */
async function runBegin(
  db: PostgresConnection,
  begin: { readonly query: Statement; readonly values: readonly unknown[]; readonly configVersion: number },
): Promise<BeginFlags> {
  const { query, values, configVersion } = begin;
  try {
    const row = (await db.rows("could not begin an operation", query, values))[0];
    const flag = (name: string) => Number(row?.[name] ?? 0);
    return { cfg: flag("cfg"), idem: flag("idem"), tok: flag("tok"), grnt: flag("grnt"), op: flag("op") };
  } catch (error) {
    // The key was free but the token used, or key and token free but the grant ended: the statement undid itself (see `beginStatement`).
    if (hasCode(error, REFUSED_SQLSTATE)) {
      const grantEnded = error instanceof Error && error.message.includes(GRANT_ENDED_REFUSAL);
      return { cfg: configVersion, idem: 1, tok: grantEnded ? 1 : 0, grnt: 0, op: 0 };
    }
    throw error;
  }
}

/** A read's begin and settle as one statement: the settled operation with its rows, unless the config changed. */
export async function recordSettledOperation(db: PostgresConnection, write: SettledOperationWrite): Promise<SettledOperationResult> {
  const op = write.operation;
  checkWrittenSettled(op);
  const values = [...operationValues(op), op.state, op.settledAt, ...activityValues(write.activity)];
  const extras = (write.extraActivity?.length ?? 0) > 0 || (write.outbox?.length ?? 0) > 0;
  if (extras) {
    values.push(JSON.stringify((write.extraActivity ?? []).map(activityValues)), JSON.stringify((write.outbox ?? []).map(outboxRow)));
  }
  const version = write.tenantConfigVersion;
  if (version !== undefined) values.push(version);
  const query = RECORD_STATEMENTS[(version !== undefined ? 2 : 0) + (extras ? 1 : 0)]!;
  const [row] = await db.rows("could not record an operation", query, values);
  if (Number(row?.recorded ?? 0) === 1) return { status: "recorded" };
  return { status: "config-changed", version: Number(row?.cfg ?? 0) };
}

/** The settle as one statement guarded by the lease; when nothing was written, the operation is read again to say why. */
export async function settleOperation(db: PostgresConnection, settle: OperationSettle): Promise<OperationSettleResult> {
  checkSettleState(settle);
  const values = [...settleValues(settle), ...activityValues(settle.activity)];
  const idempotency = settle.idempotency;
  let key: SettleKey = "none";
  if (idempotency !== undefined) {
    values.push(buffer(idempotency.sealedResult), idempotency.guardSet ?? null);
    if (idempotency.scope === undefined) key = "operation";
    else {
      key = "scope";
      values.push(...scopeValues(idempotency.scope));
    }
  }
  const extras = (settle.extraActivity?.length ?? 0) > 0 || (settle.outbox?.length ?? 0) > 0;
  if (extras) {
    values.push(JSON.stringify((settle.extraActivity ?? []).map(activityValues)), JSON.stringify((settle.outbox ?? []).map(outboxRow)));
  }
  const [row] = await db.rows("could not settle an operation", SETTLE_STATEMENTS[`${key}:${extras}`], values);
  if (Number(row?.settled ?? 0) === 1) return "settled";

  // Nothing was written; read the operation afresh to say why (another settle may have just committed).
  const [current] = await db.rows("could not read an operation", S.operationState, [settle.operationId, settle.tenantId]);
  return unsettled(settle.operationId, current === undefined ? undefined : String(current.state));
}
