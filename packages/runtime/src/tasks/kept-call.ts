/**
 * What a task keeps (sealed) to run its call later, on any instance: the ref and validated-to-be input,
 * the actor's verification level and roles (the rest of the principal is on the row), how the call
 * arrived, and whether to preview first.
 */
import { PLUGIN_ID_MAX_LENGTH, PLUGIN_ID_PATTERN, TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN, ToolpactError, type ToolRef } from "@toolpact/contract";
import type { CallerTransport, Principal } from "../api.js";
import type { TaskRecord } from "../store/store.js";

/** The sealed part of a task (short keys: it is stored per task). */
export interface KeptCall {
  readonly ref: ToolRef;
  readonly input: unknown;
  readonly actor: { readonly l: number; readonly r: readonly string[] };
  readonly via?: CallerTransport;
  readonly correlationId?: string;
  /** True: preview first (the call may need the user's approval); false: execute at once. */
  readonly confirm: boolean;
}

/** The call a task keeps, from the principal that starts it. */
export function keptCallOf(principal: Principal, ref: ToolRef, input: unknown, confirm: boolean): KeptCall {
  return {
    ref: ref.version === undefined ? { providerId: ref.providerId, tool: ref.tool } : { providerId: ref.providerId, tool: ref.tool, version: ref.version },
    input,
    actor: { l: principal.actor.verificationLevel, r: [...principal.actor.roles] },
    ...(principal.via === undefined ? {} : { via: principal.via }),
    ...(principal.correlationId === undefined ? {} : { correlationId: principal.correlationId }),
    confirm,
  };
}

/**
 * The principal a task's call runs as, on whichever instance moves it: the tenant, caller and actor that
 * started it, and the plugin key it was started with (every call checks the key is still live).
 */
export function principalOf(record: TaskRecord, kept: KeptCall): Principal {
  return Object.freeze({
    tenantId: record.tenantId,
    callerPluginId: record.callerPluginId,
    actor: Object.freeze({ userId: record.actorUserId, verificationLevel: kept.actor.l, roles: Object.freeze([...kept.actor.r]) }),
    ...(record.keyId === undefined ? {} : { keyId: record.keyId }),
    ...(kept.via === undefined ? {} : { via: kept.via }),
    ...(kept.correlationId === undefined ? {} : { correlationId: kept.correlationId }),
  });
}

/** The tool as called: `<providerId>:<tool>`, with `@<version>` when the call named one. */
export function toolLabel(ref: ToolRef): string {
  return `${ref.providerId}:${ref.tool}${ref.version === undefined ? "" : `@${ref.version}`}`;
}

/**
 * Checks a ref's shape before a task keeps it (the call's own steps check the rest when it runs): a
 * plugin id, a tool name and, when given, a positive integer version.
 */
export function checkRefShape(ref: ToolRef): void {
  const { providerId, tool, version } = ref ?? {};
  if (typeof providerId !== "string" || providerId.length > PLUGIN_ID_MAX_LENGTH || !PLUGIN_ID_PATTERN.test(providerId)) {
    throw new ToolpactError("PROVIDER_NOT_FOUND", 'ref.providerId is not a plugin id, e.g. "com.example.notes"');
  }
  if (typeof tool !== "string" || tool.length > TOOL_NAME_MAX_LENGTH || !TOOL_NAME_PATTERN.test(tool)) {
    throw new ToolpactError("TOOL_NOT_FOUND", 'ref.tool is not a tool name, e.g. "create-record"');
  }
  if (version !== undefined && !(Number.isSafeInteger(version) && version > 0)) {
    throw new ToolpactError("VERSION_UNSUPPORTED", `ref.version must be a positive integer; got ${String(version).slice(0, 40)}`);
  }
}
