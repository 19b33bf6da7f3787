/**
 * Reading a tenant's configuration on PostgreSQL: one statement answers the version, the policies, the
 * installed plugins and their activations; nothing is read past the version when the caller already has it.
 */
import { tenantConfigFromRow } from "../rows.js";
import type { ActivationRecord, TenantConfigRecord } from "../store.js";
import type { PostgresConnection } from "./connection.js";
import { S } from "./statements.js";

/** The tenant's configuration, or undefined when it is still at `knownVersion`. */
export async function loadTenantConfig(db: PostgresConnection, tenantId: string, knownVersion?: number): Promise<TenantConfigRecord | undefined> {
  const [row] = await db.rows("could not load a tenant's configuration", S.loadTenant, [tenantId, knownVersion ?? null]);
  const version = row?.config_version === null || row?.config_version === undefined ? 0 : Number(row.config_version);
  if (knownVersion !== undefined && version === knownVersion) return undefined;
  const plugins = ((row?.plugins ?? []) as [string, boolean, number][]).map(([pluginId, enabled, installedAt]) => ({
    pluginId,
    enabled,
    installedAt: Number(installedAt),
  }));
  const activations = ((row?.activations ?? []) as [string, string[], string[], string[]][]).map(
    ([pluginId, gates, hooks, guards]): ActivationRecord => ({ pluginId, gates, hooks, guards }),
  );
  return tenantConfigFromRow(row, { tenantId, version, plugins, activations });
}
