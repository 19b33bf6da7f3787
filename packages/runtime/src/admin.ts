/**
 * The admin surface (`runtime.admin`): installs, keys, policies, activations and the outbox, per tenant.
 * The server checks the admin credential before any of these is called.
 */
import {
  ID_MAX_LENGTH,
  OUTBOX_BATCH_MAX,
  OUTBOX_LEASE_MAX_SECONDS,
  PLUGIN_ID_MAX_LENGTH,
  PLUGIN_ID_PATTERN,
  TENANT_ID_MAX_LENGTH,
  ToolpactError,
  didYouMean,
} from "@toolpact/contract";
import { readActivityPage } from "./activity/activity-page.js";
import { createAdminViews } from "./admin-views.js";
import type { Activation, ActivityQuery, OutboxClaim, OutboxItem, RecoveryPolicy, RuntimeAdmin, TenantPolicy } from "./api.js";
import { checkCallerId } from "./caller-ids.js";
import { uuidv7 } from "./ids.js";
import { issuePluginKey } from "./identity/plugin-keys.js";
import type { RuntimeContext } from "./options.js";
import { normalizePolicy } from "./permission-policy.js";
import { pluginIdHint } from "./plugin-id-hint.js";
import { normalizeRecoveryPolicy } from "./recovery-policy.js";
import type { PluginRegistry } from "./registry.js";
import type { SealedPayloads } from "./sealed/sealed-payloads.js";
import type { ActivityRecord } from "./store/store.js";

/** What the admin surface runs on. */
export interface AdminParts {
  readonly context: RuntimeContext;
  readonly registry: PluginRegistry;
  readonly sealed: SealedPayloads;
  /**
   * Runs an admin write in the runtime's in-flight accounting; with `tenantId`, a config write, which
   * applies to this runtime at once.
   */
  readonly track: <T>(work: () => Promise<T>, tenantId?: string) => Promise<T>;
}

/** Makes `runtime.admin`. */
export function createAdmin(parts: AdminParts): RuntimeAdmin {
  const { context, registry, sealed, track } = parts;
  const { store } = context;
  const known = (pluginId: string): void => {
    if (typeof pluginId !== "string" || pluginId.length > PLUGIN_ID_MAX_LENGTH || !PLUGIN_ID_PATTERN.test(pluginId)) {
      throw invalidArgument(
        "/pluginId",
        `pluginId ${JSON.stringify(String(pluginId).slice(0, PLUGIN_ID_MAX_LENGTH))} is not a plugin id: ` +
          `plugin ids are lowercase dot-separated names like "com.example.notes", as the plugin's manifest declares them`,
      );
    }
    if (registry.get(pluginId) === undefined) {
      throw new ToolpactError(
        "PROVIDER_NOT_FOUND",
        `no plugin "${pluginId}" is loaded in this host${pluginIdHint(pluginId, registry.manifests.keys())}: ` +
          `with toolpact serve, add the plugin's folder (the one holding its plugin.json, and its module unless it only calls tools) ` +
          `to "plugins" in toolpact.config.json and restart; a host embedding the runtime calls runtime.registerPlugin(manifest) first`,
      );
    }
  };
  /** For a refusal about `tenantId`: nothing when the tenant is configured, else a note with the nearest configured tenant. */
  const tenantHint = async (tenantId: string): Promise<string> => {
    const configured = await store.listTenantIds(TENANT_HINT_CANDIDATES);
    if (configured.includes(tenantId)) return "";
    return `; no tenant "${tenantId}" is configured in this host${didYouMean(tenantId, configured)}`;
  };
  return Object.freeze({
    installPlugin: (tenantId: string, pluginId: string) =>
      track(async () => {
        checkTenant(tenantId);
        known(pluginId);
        await store.installPlugin(tenantId, pluginId, context.clock());
      }, tenantId),
    setPluginEnabled: (tenantId: string, pluginId: string, enabled: boolean) =>
      track(async () => {
        checkTenant(tenantId);
        known(pluginId);
        if (typeof enabled !== "boolean") throw invalidArgument("/enabled", "enabled is true or false");
        if (!(await store.setPluginEnabled(tenantId, pluginId, { enabled, now: context.clock() }))) {
          throw new ToolpactError(
            "PROVIDER_NOT_FOUND",
            `plugin "${pluginId}" is not installed for tenant "${tenantId}": install it first with admin.installPlugin${await tenantHint(tenantId)}`,
          );
        }
      }, tenantId),
    issuePluginKey: (tenantId: string, pluginId: string) =>
      track(async () => {
        checkTenant(tenantId);
        known(pluginId);
        const issued = issuePluginKey();
        await store.insertPluginKey({ keyId: issued.keyId, tenantId, pluginId, keyHash: issued.keyHash, createdAt: context.clock() });
        return { keyId: issued.keyId, key: issued.key };
      }),
    revokePluginKey: (tenantId: string, keyId: string) =>
      track(async () => {
        checkTenant(tenantId);
        checkCallerId("keyId", keyId);
        if (!(await store.revokePluginKey(tenantId, keyId, context.clock()))) {
          throw invalidArgument("/keyId", `tenant "${tenantId}" has no live plugin key "${String(keyId).slice(0, 64)}"${await tenantHint(tenantId)}`);
        }
      }),
    setPolicy: (tenantId: string, policy: TenantPolicy) =>
      track(async () => {
        checkTenant(tenantId);
        const normalized = normalizePolicy(policy);
        await store.setPolicy(tenantId, JSON.stringify(normalized), policyEvent(tenantId, context.clock()));
      }, tenantId),
    setActivation: (tenantId: string, pluginId: string, activation: Activation) =>
      track(async () => {
        checkTenant(tenantId);
        known(pluginId);
        const plugin = registry.get(pluginId)!;
        const lists = { gates: activation?.gates ?? [], hooks: activation?.hooks ?? [], guards: activation?.guards ?? [] };
        const undeclared: string[] = [];
        for (const kind of ["gates", "hooks", "guards"] as const) {
          const names = lists[kind];
          if (!Array.isArray(names) || names.some((name) => typeof name !== "string")) {
            throw invalidArgument(`/${kind}`, `${kind} is a list of names the plugin's manifest declares`);
          }
          for (const name of names) if (!plugin[kind].has(name)) undeclared.push(`${kind.slice(0, -1)} "${String(name).slice(0, 64)}"`);
        }
        if (undeclared.length > 0) {
          throw new ToolpactError(
            "CAPABILITY_UNDECLARED",
            `plugin "${pluginId}" does not declare ${undeclared.join(", ")}: only declared gates, hooks and guards can be activated`,
          );
        }
        await store.setActivation(
          { tenantId, pluginId, gates: [...new Set(lists.gates)], hooks: [...new Set(lists.hooks)], guards: [...new Set(lists.guards)] },
          policyEvent(tenantId, context.clock(), pluginId),
        );
      }, tenantId),
    setRecoveryPolicy: (tenantId: string, policy: RecoveryPolicy) =>
      track(async () => {
        checkTenant(tenantId);
        const tools = [...registry.all()].flatMap((plugin) => plugin.toolList);
        const normalized = normalizeRecoveryPolicy(policy, tools);
        await store.setRecoveryPolicy(tenantId, JSON.stringify(normalized), policyEvent(tenantId, context.clock()));
      }, tenantId),
    claimOutbox: (tenantId: string, claim: OutboxClaim) =>
      track(async () => {
        checkTenant(tenantId);
        const limit = claim?.limit;
        const leaseSeconds = claim?.leaseSeconds;
        if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > OUTBOX_BATCH_MAX) {
          throw invalidArgument("/limit", `limit is an integer from 1 to ${OUTBOX_BATCH_MAX}`);
        }
        if (typeof leaseSeconds !== "number" || !Number.isInteger(leaseSeconds) || leaseSeconds < 1 || leaseSeconds > OUTBOX_LEASE_MAX_SECONDS) {
          throw invalidArgument("/leaseSeconds", `leaseSeconds is an integer from 1 to ${OUTBOX_LEASE_MAX_SECONDS}`);
        }
        const now = context.clock();
        const rows = await store.claimOutbox(tenantId, { limit, now, claimUntil: now + leaseSeconds * 1000 });
        return rows.map(
          (row): OutboxItem => ({
            id: row.id,
            tenantId: row.tenantId,
            kind: row.kind,
            payload: sealed.openOutboxPayload(row.tenantId, row.id, row.sealedPayload),
            hook: row.hook,
            operationId: row.operationId,
            tool: row.tool,
            createdAt: new Date(row.createdAt).toISOString(),
            attempts: row.attempts,
            claimedUntil: new Date(row.claimedUntil ?? now + leaseSeconds * 1000).toISOString(),
          }),
        );
      }),
    ackOutbox: (tenantId: string, ids: readonly string[]) =>
      track(async () => {
        checkTenant(tenantId);
        if (!Array.isArray(ids) || ids.length > OUTBOX_BATCH_MAX || ids.some((id) => typeof id !== "string" || id.length === 0 || id.length > ID_MAX_LENGTH)) {
          throw invalidArgument("/ids", `ids is a list of at most ${OUTBOX_BATCH_MAX} outbox item ids`);
        }
        await store.ackOutbox(tenantId, ids);
      }),
    listActivity: (tenantId: string, query?: ActivityQuery) =>
      track(async () => {
        checkTenant(tenantId);
        return readActivityPage(store, { tenantId, query });
      }),
    views: createAdminViews({ store, manifests: registry.manifests, clock: context.clock }),
  });
}

/** How many configured tenant ids a mistyped one is compared with (refusals only). */
const TENANT_HINT_CANDIDATES = 10_000;

/** A configuration change as the activity log shows it (`kind: policy`). */
function policyEvent(tenantId: string, at: number, pluginId?: string): ActivityRecord {
  return {
    id: uuidv7(at),
    tenantId,
    at,
    kind: "policy",
    phase: "change",
    outcome: "succeeded",
    ...(pluginId === undefined ? {} : { providerPluginId: pluginId }),
  };
}

/** Control and format characters (NUL, newlines, bidirectional marks...): never part of a tenant id. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/**
 * A tenant id as actor tokens carry it (`tid`): 1 to TENANT_ID_MAX_LENGTH characters, no control or
 * invisible characters, no surrounding whitespace (a pasted id with a trailing newline is refused, not
 * made a tenant of its own).
 */
function checkTenant(tenantId: string): void {
  const shape = `a tenant id is 1 to ${TENANT_ID_MAX_LENGTH} characters with no control or invisible characters and no surrounding spaces, as actor tokens carry it in "tid"`;
  if (typeof tenantId !== "string" || tenantId.length === 0 || tenantId.length > TENANT_ID_MAX_LENGTH) {
    throw invalidArgument("/tenantId", shape);
  }
  if (INVISIBLE.test(tenantId) || tenantId.trim() !== tenantId) {
    throw invalidArgument("/tenantId", `tenantId ${JSON.stringify(tenantId.slice(0, TENANT_ID_MAX_LENGTH))} is malformed: ${shape}`);
  }
}

function invalidArgument(path: string, message: string): ToolpactError {
  return new ToolpactError("INPUT_INVALID", message, { issues: [{ path, message }] });
}
