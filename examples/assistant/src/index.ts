/**
 * The assistant example: a caller plugin. It calls the notes and mailer tools from outside the host,
 * over HTTP, with its plugin key and the user's actor token (see session.ts).
 */
import type { PluginSdk } from "@toolpact/runtime";

export { runAssistantSession, SessionCheckError, ASSISTANT_ID, EXPECTED_TOOLS } from "./session.js";
export type { AssistantSessionOptions, AssistantSessionResult } from "./session.js";
export { decideOnConfirmationPage, type ConfirmationPageVisit, type ConfirmationPageVisitOptions } from "./confirmation-page-visit.js";
export { mintActorToken, mintPresenceToken, ACTOR_AUDIENCE, PRESENCE_AUDIENCE } from "./identity.js";
export type { IdentityService, Person, ActorTokenOptions } from "./identity.js";
export { createTextNarrator, formatTable, type Narrator } from "./narrator.js";
export { trpcQuery, trpcMutation, adminHeaders, callerHeaders, type WireHeaders } from "./wire.js";
export {
  DEMO_TENANT,
  DEMO_ISSUER,
  DEMO_POLICY,
  EXAMPLE_PLUGIN_DIRS,
  setUpTenant,
  demoIdentity,
  freePort,
  generateSecrets,
  hostEnvironment,
  examplesConfig,
  type DemoSecrets,
  type TenantSetup,
} from "./demo-world.js";

/**
 * The host loads every plugin it serves, callers too, to know their manifests. The assistant provides
 * no tools, gates, hooks or guards, so there is nothing to register: its manifest's `permissions` and
 * `uses` are all the host needs.
 */
export function activate(sdk: PluginSdk): void {
  if (sdk.pluginId !== "com.example.assistant") throw new Error(`the assistant module was loaded for plugin "${sdk.pluginId}"`);
}
