import { createHash } from "node:crypto";
import { inputDigest } from "@toolpact/contract";
import type { Principal } from "../api.js";
import { checkCallerId } from "../caller-ids.js";
import type { ResolvedSeams } from "../seams.js";
import type { IdempotencyScope } from "../store/store.js";

/** An idempotency key as the ledger keeps it: who it belongs to (the key only hashed) and the input's digest. */
export interface IdempotencyKeying {
  readonly scope: IdempotencyScope;
  readonly inputDigest: string;
}

/** What an idempotency key is scoped by. */
export interface KeyedCall {
  readonly principal: Principal;
  /** The tool's full name. */
  readonly tool: string;
  /** The validated, frozen input. */
  readonly input: unknown;
  /** HKDF(storage key, "toolpact-idempotency"). */
  readonly digestKey: Uint8Array;
}

/**
 * A caller's idempotency key scoped to (tenant, caller, actor, tool), with the digest of the input it is used with.
 * @throws ToolpactError INPUT_INVALID for a key of the wrong shape (the runtime checks it before any call, too).
 */
export function idempotencyKeying(call: KeyedCall, key: string): IdempotencyKeying {
  checkCallerId("idempotencyKey", key);
  const { principal } = call;
  return {
    scope: {
      tenantId: principal.tenantId,
      callerPluginId: principal.callerPluginId,
      actorUserId: principal.actor.userId,
      tool: call.tool,
      keyHash: createHash("sha256").update(key, "utf8").digest("base64url"),
    },
    inputDigest: inputDigest(call.digestKey, call.input),
  };
}

/** The guards acting on a call, in order: kept with an idempotency record, compared on replay. */
export function guardSetOf(seams: ResolvedSeams): string {
  return seams.guards.map((guard) => guard.key).join("\n");
}
