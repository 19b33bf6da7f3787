import { uuidv7Floor } from "../../ids.js";
import { CONSUMED_TOKEN_GRACE_MS, type PruneRequest, type PruneResult } from "../store.js";
import type { PostgresConnection } from "./connection.js";
import { PRUNE_CHUNK } from "./settings.js";
import { S, type Statement } from "./statements.js";
import { PRUNE_TASKS } from "./tasks.js";

/** Deletes what retention allows, in chunks, each under the (longer) prune statement timeout. */
export async function prunePostgres(db: PostgresConnection, request: PruneRequest): Promise<PruneResult> {
  const drain = async (query: Statement, cutoff: unknown): Promise<number> => {
    let total = 0;
    for (;;) {
      const deleted = await db.pruneChunk(query, [cutoff, PRUNE_CHUNK]);
      total += deleted;
      if (deleted < PRUNE_CHUNK) return total;
    }
  };
  const consumedTokens = await drain(S.pruneTokens, request.consumedTokensExpiredBefore ?? request.now - CONSUMED_TOKEN_GRACE_MS);
  const idempotencyRecords = await drain(S.pruneIdempotency, request.now);
  const activityEvents = await drain(S.pruneActivity, uuidv7Floor(request.activityBefore + 1));
  await db.pruneChunk(S.pruneCheckpoints, [uuidv7Floor(request.activityBefore + 1)]);
  const expiredBefore = request.confirmationsExpiredBefore;
  const confirmations = expiredBefore === undefined ? 0 : await drain(S.pruneConfirmations, expiredBefore);
  const runs = expiredBefore === undefined ? 0 : await drain(S.pruneRuns, expiredBefore);
  const outboxItems = request.outboxBefore === undefined ? 0 : await db.pruneChunk(S.pruneOutbox, [request.outboxBefore]);
  const operations = request.operationsBefore === undefined ? 0 : await drain(S.pruneOperations, uuidv7Floor(request.operationsBefore + 1));
  const tasks = await drain(PRUNE_TASKS, request.now);
  return { consumedTokens, idempotencyRecords, activityEvents, confirmations, runs, outboxItems, operations, tasks };
}
