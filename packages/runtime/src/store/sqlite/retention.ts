import type Database from "better-sqlite3";
import { uuidv7Floor } from "../../ids.js";
import { CONSUMED_TOKEN_GRACE_MS, type PruneRequest, type PruneResult } from "../store.js";

/** Deletes what retention allows (run inside a write transaction): off the hot path, so statements are prepared here. */
export function pruneSqlite(db: Database.Database, request: PruneRequest): PruneResult {
  const consumedTokens = db
    .prepare("DELETE FROM consumed_tokens WHERE expires_at <= ?")
    .run(request.consumedTokensExpiredBefore ?? request.now - CONSUMED_TOKEN_GRACE_MS).changes;
  const idempotencyRecords = db.prepare("DELETE FROM idempotency_keys WHERE expires_at <= ?").run(request.now).changes;
  // Activity ids are UUIDv7, so "older than" is a range of the primary key within each tenant.
  const floor = uuidv7Floor(request.activityBefore + 1);
  const tenants = db.prepare("SELECT DISTINCT tenant_id FROM activity").pluck().all() as string[];
  const deleteOld = db.prepare("DELETE FROM activity WHERE tenant_id = ? AND id < ?");
  let activityEvents = 0;
  for (const tenant of tenants) activityEvents += deleteOld.run(tenant, floor).changes;
  // Checkpoints whose last event is past retention go with the events they covered.
  db.prepare("DELETE FROM activity_checkpoints WHERE last_id < ?").run(floor);
  db.prepare("DELETE FROM activity_chain_heads WHERE last_id < ?").run(floor);
  let confirmations = 0;
  let runs = 0;
  let outboxItems = 0;
  if (request.confirmationsExpiredBefore !== undefined) {
    confirmations = db
      .prepare("DELETE FROM confirmation_requests WHERE expires_at <= ? AND (token_expires_at IS NULL OR token_expires_at <= ?)")
      .run(request.confirmationsExpiredBefore, request.confirmationsExpiredBefore).changes;
    runs = db.prepare("DELETE FROM runs WHERE expires_at <= ?").run(request.confirmationsExpiredBefore).changes;
  }
  if (request.outboxBefore !== undefined) {
    outboxItems = db.prepare("DELETE FROM outbox WHERE created_at <= ?").run(request.outboxBefore).changes;
  }
  let operations = 0;
  if (request.operationsBefore !== undefined) {
    // Operation ids are UUIDv7 too: a range of the primary key; a running operation stays whatever its age.
    operations = db.prepare("DELETE FROM operations WHERE operation_id < ? AND state <> 'running'").run(uuidv7Floor(request.operationsBefore + 1)).changes;
  }
  const tasks = db.prepare("DELETE FROM tasks WHERE expires_at <= ? AND task_status IN ('completed', 'failed', 'cancelled')").run(request.now).changes;
  return { consumedTokens, idempotencyRecords, activityEvents, confirmations, runs, outboxItems, operations, tasks };
}
