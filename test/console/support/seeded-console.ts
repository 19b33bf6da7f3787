/**
 * A `toolpact serve` host (startHost with a config file and plugin folders) with the console enabled,
 * seeded with activity an operator looks into: a read that ran, a call the policy refused, a write that
 * was confirmed and ran, and a write waiting for its confirmation; two tenants; keys.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import * as jose from "jose";
import { loadHostConfig, startHost, type RunningHost } from "@toolpact/server";

export const TENANT = "acme";
export const OTHER_TENANT = "globex";
export const PROVIDER = "com.example.notes";
export const CALLER = "com.example.assistant";
export const ISSUER = "https://id.example";
/** The user whose call the policy refuses. */
export const REFUSED_USER = "mallory";

/** The running host and what the tests need to know about it. */
export interface SeededConsole {
  readonly host: RunningHost;
  readonly url: string;
  readonly adminKey: string;
  /** The confirmed write's operation (its story has a confirmation). */
  readonly confirmedOperationId: string;
  /** The pending request's id. */
  readonly pendingRequestId: string;
  /** The caller's key id in TENANT. */
  readonly callerKeyId: string;
  close(): Promise<void>;
}

const providerManifest = {
  id: PROVIDER,
  name: "Notes",
  version: "2.3.0",
  permissions: ["tools:provide"],
  tools: [
    { name: "list-notes", effect: "read", inputSchema: { type: "object" } },
    { name: "delete-note", effect: "write", inputSchema: { type: "object", properties: { id: { type: "string" } } } },
    { name: "purge-notes", effect: "write", version: 2, inputSchema: { type: "object" } },
  ],
};

const callerManifest = { id: CALLER, name: "Assistant", version: "0.9.1", permissions: ["tools:call"] };

/** Starts the host in a temp dir (console on unless `console` says otherwise) and seeds it. */
export async function startSeededConsole(options: { readonly console?: Record<string, unknown> } = {}): Promise<SeededConsole> {
  const dir = mkdtempSync(path.join(tmpdir(), "toolpact-console-"));
  const writePlugin = (name: string, manifest: object, activate: string) => {
    const folder = path.join(dir, "plugins", name);
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, "plugin.json"), JSON.stringify(manifest, null, 2));
    writeFileSync(path.join(folder, "package.json"), JSON.stringify({ type: "module", main: "./main.js" }));
    writeFileSync(path.join(folder, "main.js"), `export function activate(sdk) {\n${activate}\n}\n`);
    return folder;
  };
  const notes = writePlugin(
    "notes",
    providerManifest,
    `sdk.tools.provide("list-notes", { execute: () => ({ notes: ["secret input never shown"] }) });
sdk.tools.provide("delete-note", { preview: (input) => ({ summary: "Delete note " + input.id }), execute: (input) => ({ deleted: input.id }) });
sdk.tools.provide("purge-notes", { execute: () => ({ purged: true }) });`,
  );
  const assistant = writePlugin("assistant", callerManifest, "");
  writeFileSync(
    path.join(dir, "toolpact.config.json"),
    JSON.stringify({ plugins: [notes, assistant], actorIssuer: ISSUER, port: 0, console: options.console ?? { enabled: true } }),
  );
  const adminKey = randomBytes(32).toString("base64url");
  const actorSecret = randomBytes(32);
  const env = {
    TOOLPACT_ADMIN_KEY: adminKey,
    TOOLPACT_ACTOR_SECRET: actorSecret.toString("base64"),
    TOOLPACT_SIGNING_KEYS: `k1:${randomBytes(32).toString("base64")}`,
    TOOLPACT_STORAGE_KEY: randomBytes(32).toString("base64"),
  };
  const config = await loadHostConfig({ cwd: dir, env: {} });
  const host = await startHost({ config, env });
  try {
    const seeded = await seed(host, actorSecret);
    return {
      host,
      url: host.url.replace(/\/$/, ""),
      adminKey,
      ...seeded,
      close: async () => {
        await host.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

async function seed(host: RunningHost, actorSecret: Uint8Array) {
  const { runtime } = host;
  const admin = runtime.admin;
  for (const plugin of [PROVIDER, CALLER]) await admin.installPlugin(TENANT, plugin);
  await admin.installPlugin(OTHER_TENANT, PROVIDER);
  await admin.setPolicy(TENANT, {
    rules: [
      { tools: `${PROVIDER}:list-notes`, decision: "allow" },
      { tools: `${PROVIDER}:delete-note`, decision: "confirm", mode: "platform" },
      { tools: `${PROVIDER}:purge-notes`, users: [REFUSED_USER], decision: "deny" },
    ],
  });
  const { keyId: callerKeyId, key } = await admin.issuePluginKey(TENANT, CALLER);
  await admin.issuePluginKey(TENANT, PROVIDER);
  await admin.issuePluginKey(OTHER_TENANT, PROVIDER);
  const principalOf = async (userId: string) => runtime.authenticate({ pluginKey: key, actorToken: await actorToken(actorSecret, userId), via: "http" });

  const alice = await principalOf("alice");
  await runtime.execute(alice, { providerId: PROVIDER, tool: "list-notes" }, {});

  const mallory = await principalOf(REFUSED_USER);
  await runtime.execute(mallory, { providerId: PROVIDER, tool: "purge-notes", version: 2 }, {}).then(
    () => {
      throw new Error("the seed expected the policy to refuse purge-notes for mallory");
    },
    (error: unknown) => {
      if ((error as { code?: string }).code !== "PERMISSION_DENIED") throw error;
    },
  );

  // A write confirmed on the platform page, then run: its story has the confirmation.
  const bob = await principalOf("bob");
  const previewed = await runtime.preview(bob, { providerId: PROVIDER, tool: "delete-note" }, { id: "n-1" });
  if (!previewed.confirmation.required || previewed.confirmation.mode !== "platform") throw new Error("the seed expected a platform confirmation");
  await runtime.decideConfirmation({ tenantId: TENANT, userId: "bob" }, previewed.confirmation.requestId, "approve");
  const status = await runtime.getConfirmation(bob, previewed.confirmation.requestId);
  if (status.status !== "approved") throw new Error(`the seed expected an approval; got ${status.status}`);
  const ran = await runtime.execute(bob, { providerId: PROVIDER, tool: "delete-note" }, { id: "n-1" }, { confirmationToken: status.token });

  // A write still waiting for carol's confirmation.
  const carol = await principalOf("carol");
  const waiting = await runtime.preview(carol, { providerId: PROVIDER, tool: "delete-note" }, { id: "n-2" });
  if (!waiting.confirmation.required || waiting.confirmation.mode !== "platform") throw new Error("the seed expected a platform confirmation");
  return { confirmedOperationId: ran.operationId, pendingRequestId: waiting.confirmation.requestId, callerKeyId };
}

function actorToken(secret: Uint8Array, userId: string): Promise<string> {
  return new jose.SignJWT({ tid: TENANT, lvl: 1 })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(ISSUER)
    .setAudience("toolpact")
    .setSubject(userId)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + 600)
    .sign(secret);
}
