/**
 * The `requestState` of a 2026-07-28 approval: what a client echoes on its retry so the bridge finds the
 * confirmation request it asked the user about. Authenticated (HMAC-SHA256 under a key derived for this one
 * purpose, never a token-signing key), expiring with the confirmation request, and bound to the call: tenant,
 * actor, caller plugin, tool, version and the input's digest. The client can read it (base64url JSON), so it
 * holds no token and nothing secret: the input appears only as a keyed digest.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { canonicalJson, inputDigest, type ToolRef } from "@toolpact/contract";
import { BOUND_CALL_CLAIMS, type BoundCall } from "@toolpact/runtime";

/** Who a call acts for: the part of a confirmation's binding that comes from the caller's credentials. */
export type CallerFacts = Pick<BoundCall, "tenantId" | "actorUserId" | "callerPluginId">;

/** The call a state is minted for and checked against. */
export interface StateCall {
  readonly caller: CallerFacts;
  readonly ref: Required<ToolRef>;
  readonly input: unknown;
}

/** What checking a state gave: the confirmation request it names, or why it is refused. */
export type StateCheck =
  | { readonly ok: true; readonly requestId: string; readonly confirmUrl: string }
  | { readonly ok: false; readonly code: "CONFIRMATION_INVALID" | "CONFIRMATION_EXPIRED" | "CONFIRMATION_MISMATCH"; readonly reason: string };

/** Mints and checks approval states. */
export interface RequestStateCodec {
  /** A state naming the confirmation request (its id and page) for `call`, valid until the request expires. */
  mint(call: StateCall, request: { readonly requestId: string; readonly confirmUrl: string; readonly expiresAt: string }): string;
  /** Checks a state echoed on a retry of `call`. */
  check(state: string, call: StateCall): StateCheck;
}

const VERSION = "tp1";
const INFO = "toolpact-mcp-request-state";
/** The binding fields a state carries, by the claim names confirmation tokens use for them. */
const BOUND_FIELDS = ["tenantId", "actorUserId", "callerPluginId", "providerId", "tool", "version"] as const;
const MAX_STATE_LENGTH = 4_096;

/**
 * Makes a codec whose key is derived from `root` (HKDF-SHA256, info "toolpact-mcp-request-state"): instances
 * sharing the root accept each other's states. Without a root, a random one: states live as long as the process.
 */
export function createRequestStateCodec(root?: Uint8Array, clock: () => number = Date.now): RequestStateCodec {
  const key = Buffer.from(hkdfSync("sha256", root ?? randomBytes(32), new Uint8Array(0), INFO, 32));
  const digestKey = new Uint8Array(hkdfSync("sha256", key, new Uint8Array(0), `${INFO}-input`, 32));
  const mac = (body: string) => createHmac("sha256", key).update(body, "ascii").digest();
  const claimsOf = (call: StateCall): Record<string, string | number> => {
    const bound = { ...call.caller, providerId: call.ref.providerId, tool: call.ref.tool, version: call.ref.version };
    const claims: Record<string, string | number> = {};
    for (const field of BOUND_FIELDS) claims[BOUND_CALL_CLAIMS[field]] = bound[field];
    claims.dig = inputDigest(digestKey, call.input);
    return claims;
  };
  return {
    mint(call, request) {
      const payload = { ...claimsOf(call), rid: request.requestId, url: request.confirmUrl, exp: Date.parse(request.expiresAt) };
      const body = `${VERSION}.${Buffer.from(canonicalJson(payload), "utf8").toString("base64url")}`;
      return `${body}.${mac(body).toString("base64url")}`;
    },
    check(state, call) {
      const parts = state.length <= MAX_STATE_LENGTH ? state.split(".") : [];
      if (parts.length !== 3 || parts[0] !== VERSION) return refused("CONFIRMATION_INVALID", "it is not a requestState this server made");
      const body = `${parts[0]}.${parts[1]}`;
      const given = Buffer.from(parts[2]!, "base64url");
      const expected = mac(body);
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        return refused("CONFIRMATION_INVALID", "its signature does not match: it was changed or made elsewhere");
      let payload: Record<string, unknown>;
      try {
        payload = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as Record<string, unknown>;
      } catch {
        return refused("CONFIRMATION_INVALID", "it does not parse");
      }
      if (typeof payload.exp !== "number" || payload.exp <= clock()) {
        return refused(
          "CONFIRMATION_EXPIRED",
          "the confirmation request it names has expired; nothing ran: call the tool again without requestState to ask again",
        );
      }
      const claims = claimsOf(call);
      const caller = [BOUND_CALL_CLAIMS.tenantId, BOUND_CALL_CLAIMS.actorUserId, BOUND_CALL_CLAIMS.callerPluginId];
      if (caller.some((claim) => payload[claim] !== claims[claim])) return refused("CONFIRMATION_MISMATCH", "it was issued to another caller or user");
      if (Object.keys(claims).some((claim) => payload[claim] !== claims[claim])) {
        return refused(
          "CONFIRMATION_MISMATCH",
          "it was issued for another tool, version or input: retry with exactly the arguments of the call that returned it",
        );
      }
      if (typeof payload.rid !== "string" || typeof payload.url !== "string") return refused("CONFIRMATION_INVALID", "it names no confirmation request");
      return { ok: true, requestId: payload.rid, confirmUrl: payload.url };
    },
  };
}

function refused(code: Extract<StateCheck, { ok: false }>["code"], why: string): StateCheck {
  return { ok: false, code, reason: `the requestState was refused and nothing ran: ${why}` };
}
