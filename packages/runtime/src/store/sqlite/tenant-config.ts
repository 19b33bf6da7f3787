/**
 * A tenant's configuration on SQLite: reading it whole (version, policies, installed plugins and their
 * activations), and the writes that move its version, each run inside one transaction of the write queue
 * (a policy or activation write logs its activity in the same transaction).
 */
import { list, tenantConfigFromRow, type Row } from "../rows.js";
import type { ActivationRecord, ActivityRecord, PluginEnabledChange, TenantConfigRecord } from "../store.js";
import { insertActivity } from "./ledger-writes.js";
import type { SqliteStatements } from "./statements.js";

/** The tenant's configuration, or undefined when it is still at `knownVersion`. */
export function readTenantConfig(s: SqliteStatements, tenantId: string, knownVersion?: number): TenantConfigRecord | undefined {
  if (knownVersion !== undefined) {
    const version = (s.tenantVersion.get(tenantId) as number | undefined) ?? 0;
    if (version === knownVersion) return undefined;
  }
  const row = s.tenantRow.get(tenantId) as Row | undefined;
  const plugins = (s.tenantInstalls.all(tenantId) as Row[]).map((install) => ({
    pluginId: String(install.plugin_id),
    enabled: install.enabled === 1,
    installedAt: Number(install.installed_at),
  }));
  const activations = (s.tenantActivations.all(tenantId) as Row[]).map(
    (activation): ActivationRecord => ({
      pluginId: String(activation.plugin_id),
      gates: list(activation.gates),
      hooks: list(activation.hooks),
      guards: list(activation.guards),
    }),
  );
  const version = row === undefined ? 0 : Number(row.config_version);
  return tenantConfigFromRow(row, { tenantId, version, plugins, activations });
}

/** Installs the plugin for the tenant; true when it was not installed yet (and the version moved). */
export function installPlugin(s: SqliteStatements, tenantId: string, pluginId: string, now: number): boolean {
  const fresh = s.insertInstall.run(tenantId, pluginId, now, now).changes > 0;
  if (fresh) s.bumpTenant.run(tenantId, now);
  return fresh;
}

/** Enables or disables an installed plugin; true when that changed something (and the version moved). */
export function setPluginEnabled(s: SqliteStatements, tenantId: string, pluginId: string, change: PluginEnabledChange): boolean {
  const { enabled, now } = change;
  const changed = s.setEnabled.run(enabled ? 1 : 0, now, tenantId, pluginId).changes > 0;
  if (changed) s.bumpTenant.run(tenantId, now);
  return changed;
}

/** Sets the tenant's policy and logs the activity. */
export function setPolicy(s: SqliteStatements, tenantId: string, policyJson: string, activity: ActivityRecord): void {
  s.bumpTenant.run(tenantId, activity.at);
  s.setTenantPolicy.run(policyJson, tenantId);
  insertActivity(s, activity);
}

/** Sets a plugin's activation (its gates, hooks and guards) and logs the activity. */
export function setActivation(s: SqliteStatements, activation: ActivationRecord & { readonly tenantId: string }, activity: ActivityRecord): void {
  s.bumpTenant.run(activation.tenantId, activity.at);
  s.upsertActivation.run(
    activation.tenantId,
    activation.pluginId,
    JSON.stringify(activation.gates),
    JSON.stringify(activation.hooks),
    JSON.stringify(activation.guards),
    activity.at,
  );
  insertActivity(s, activity);
}

/** Sets the tenant's recovery policy and logs the activity. */
export function setRecoveryPolicy(s: SqliteStatements, tenantId: string, policyJson: string, activity: ActivityRecord): void {
  s.bumpTenant.run(tenantId, activity.at);
  s.setTenantRecovery.run(policyJson, tenantId);
  insertActivity(s, activity);
}
