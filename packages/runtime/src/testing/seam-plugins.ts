/** Plugins that declare gates, hooks and guards, for the tests of the steps that run them. */
import type { GateDeclaration, GuardDeclaration, HookDeclaration, Manifest } from "@toolpact/contract";
import type { ActivityEvent } from "../api.js";
import type { PluginSdk } from "../plugin-sdk.js";
import { TENANT, type RuntimeFixture } from "./fixtures.js";

/** A plugin declaring the given seams, with the permissions they need. */
export function seamPlugin(id: string, seams: { gates?: GateDeclaration[]; hooks?: HookDeclaration[]; guards?: GuardDeclaration[] }): Manifest {
  const permissions: Manifest["permissions"][number][] = [];
  if (seams.gates !== undefined) permissions.push("tools:gate");
  if (seams.hooks !== undefined) permissions.push("tools:observe");
  if (seams.guards !== undefined) permissions.push("tools:guard");
  return { id, version: "1.0.0", permissions, tools: [], gates: seams.gates ?? [], hooks: seams.hooks ?? [], guards: seams.guards ?? [] };
}

/** Registers and installs a seam plugin, and (unless told not to) activates all it declares; returns its SDK. */
export async function addSeamPlugin(fx: RuntimeFixture, manifest: Manifest, activate = true): Promise<PluginSdk> {
  fx.runtime.registerPlugin(manifest);
  await fx.runtime.admin.installPlugin(TENANT, manifest.id);
  if (activate) {
    await fx.runtime.admin.setActivation(TENANT, manifest.id, {
      gates: manifest.gates.map((g) => g.name),
      hooks: manifest.hooks.map((h) => h.name),
      guards: manifest.guards.map((g) => g.name),
    });
  }
  return fx.runtime.sdkFor(manifest.id);
}

/** The tenant's events, newest first, of one kind or all. */
export async function tenantEvents(fx: RuntimeFixture, kind?: ActivityEvent["kind"]): Promise<readonly ActivityEvent[]> {
  const all = (await fx.runtime.admin.listActivity(TENANT, { limit: 1000 })).events;
  return kind === undefined ? all : all.filter((event) => event.kind === kind);
}

/** A gate declaration. */
export const gate = (name: string, appliesTo = ["*"], timeoutMs?: number): GateDeclaration =>
  timeoutMs === undefined ? { name, appliesTo } : { name, appliesTo, timeoutMs };

/** A promise that never settles: plugin code that hangs. */
export const never = () => new Promise<never>(() => undefined);
