/**
 * The demo's world: a `toolpact serve` child process with the three example plugins on a fresh
 * SQLite file, throwaway secrets, and a tenant set up through the admin API.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { TenantPolicy } from "@toolpact/runtime";
import type { IdentityService } from "./identity.js";
import type { Narrator } from "./narrator.js";
import { ASSISTANT_ID } from "./session.js";
import { adminHeaders, trpcMutation } from "./wire.js";

/** The tenant the demo sets up. */
export const DEMO_TENANT = "demo";
/** The `iss` of the demo identity service's tokens. */
export const DEMO_ISSUER = "https://id.demo.example";
/** The notes example plugin's id. */
export const NOTES_ID = "com.example.notes";
/** The mailer example plugin's id. */
export const MAILER_ID = "com.example.mailer";

/**
 * The demo tenant's policy: the assistant may use the notes tools, and the tenant trusts it to show
 * the user a preview and confirm (token mode); sending mail is confirmed by the user on toolpact's
 * own page (platform mode) whoever asks.
 */
export const DEMO_POLICY: TenantPolicy = {
  rules: [
    { tools: `${NOTES_ID}:*`, callers: [ASSISTANT_ID], decision: "allow" },
    { tools: `${MAILER_ID}:*`, callers: [ASSISTANT_ID], decision: "confirm", mode: "platform" },
  ],
  trustedConfirmationUis: [ASSISTANT_ID],
};

/** The example plugin folders, in load order. */
export const EXAMPLE_PLUGIN_DIRS: readonly string[] = ["notes", "mailer", "assistant"].map((name) => fileURLToPath(new URL(`../../${name}`, import.meta.url)));

/** Throwaway secrets for one run, as `toolpact serve` reads them from the environment. */
export interface DemoSecrets {
  readonly adminKey: string;
  readonly actorSecret: Uint8Array;
  readonly signingKey: Uint8Array;
  readonly storageKey: Uint8Array;
}

/** Four fresh random 32-byte secrets. */
export function generateSecrets(): DemoSecrets {
  return {
    adminKey: randomBytes(32).toString("base64url"),
    actorSecret: new Uint8Array(randomBytes(32)),
    signingKey: new Uint8Array(randomBytes(32)),
    storageKey: new Uint8Array(randomBytes(32)),
  };
}

/** The identity service that signs with the demo's actor secret. */
export function demoIdentity(secrets: DemoSecrets): IdentityService {
  return { issuer: DEMO_ISSUER, secret: secrets.actorSecret };
}

/** The environment a host needs: its four secrets and where each example plugin keeps its data. */
export function hostEnvironment(secrets: DemoSecrets, dataDir: string): Record<string, string> {
  return {
    TOOLPACT_ADMIN_KEY: secrets.adminKey,
    TOOLPACT_ACTOR_SECRET: Buffer.from(secrets.actorSecret).toString("base64"),
    TOOLPACT_SIGNING_KEYS: `demo-1:${Buffer.from(secrets.signingKey).toString("base64")}`,
    TOOLPACT_STORAGE_KEY: Buffer.from(secrets.storageKey).toString("base64"),
    NOTES_DB_PATH: path.join(dataDir, "notes.db"),
    MAILER_OUTBOX_PATH: path.join(dataDir, "mailer-outbox.db"),
  };
}

/** `toolpact.config.json` for the examples: the plugins, a SQLite file in `dataDir`, the public URL. */
export function examplesConfig(dataDir: string, port: number): Record<string, unknown> {
  return {
    plugins: EXAMPLE_PLUGIN_DIRS,
    database: path.join(dataDir, "toolpact.db"),
    host: "127.0.0.1",
    port,
    publicUrl: `http://127.0.0.1:${port}`,
    actorIssuer: DEMO_ISSUER,
  };
}

/** A free TCP port on 127.0.0.1 (asked of the OS, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** A running `toolpact serve` child process. */
export interface ServeProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Its log lines (JSON, from stderr) and any other output, for when something goes wrong. */
  readonly output: readonly string[];
  /** SIGTERM, then waits for a graceful exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Options of `startServe`. */
export interface StartServeOptions {
  readonly dataDir: string;
  readonly port: number;
  readonly secrets: DemoSecrets;
  /** How long to wait for "toolpact serving", ms (default 30 s). */
  readonly timeoutMs?: number;
}

/**
 * Writes the config into `dataDir` and starts `node packages/cli/dist/bin.js serve --config ...` with the
 * secrets in its environment only; resolves once it prints that it is serving.
 */
export async function startServe(options: StartServeOptions): Promise<ServeProcess> {
  const configFile = path.join(options.dataDir, "toolpact.config.json");
  writeFileSync(configFile, `${JSON.stringify(examplesConfig(options.dataDir, options.port), null, 2)}\n`);
  const bin = path.join(path.dirname(fileURLToPath(import.meta.resolve("@toolpact/cli"))), "bin.js");
  const env: NodeJS.ProcessEnv = { ...process.env, ...hostEnvironment(options.secrets, options.dataDir) };
  delete env.TOOLPACT_DATABASE_URL; // the config's fresh SQLite file, whatever the caller's shell says
  // Its own process group: a Ctrl-C in the terminal reaches only this process, which stops the server
  // with one SIGTERM (a second signal would make it stop without draining).
  const child = spawn(process.execPath, [bin, "serve", "--config", configFile], { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      process.off("exit", killOnExit);
      resolve(code);
    }),
  );

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`toolpact serve did not start within ${options.timeoutMs ?? 30_000} ms:\n${output.join("\n")}`)),
      options.timeoutMs ?? 30_000,
    );
    const collect = (stream: NodeJS.ReadableStream, onLine?: (line: string) => void) => {
      let rest = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        const lines = (rest + chunk).split("\n");
        rest = lines.pop() ?? "";
        for (const line of lines) {
          output.push(line);
          onLine?.(line);
        }
      });
    };
    collect(child.stdout!, (line) => {
      const serving = /^toolpact serving \d+ plugins? at (http:\/\/\S+)\/trpc$/.exec(line);
      if (serving) {
        clearTimeout(timer);
        resolve(serving[1]!);
      }
    });
    collect(child.stderr!);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`toolpact serve exited with code ${code} before serving:\n${output.join("\n")}`));
    });
  });

  return {
    url,
    child,
    output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

/** The caller credential the tenant setup issued. */
export interface TenantSetup {
  readonly pluginKey: string;
  readonly keyId: string;
}

/** As the tenant's admin, over the admin API: install the three plugins, issue the assistant's key, set the policy. */
export async function setUpTenant(url: string, adminKey: string, narrator?: Narrator): Promise<TenantSetup> {
  const headers = adminHeaders(adminKey);
  for (const pluginId of [NOTES_ID, MAILER_ID, ASSISTANT_ID]) {
    await trpcMutation(url, "admin.installPlugin", { tenantId: DEMO_TENANT, pluginId }, headers);
  }
  narrator?.say("installed", `${NOTES_ID}, ${MAILER_ID} and ${ASSISTANT_ID} for tenant "${DEMO_TENANT}"  (admin.installPlugin)`);
  const issued = await trpcMutation<{ keyId: string; key: string }>(url, "admin.issuePluginKey", { tenantId: DEMO_TENANT, pluginId: ASSISTANT_ID }, headers);
  narrator?.say("issued", `the assistant's plugin key ${issued.keyId} (stored hashed; sent as Authorization: Bearer)  (admin.issuePluginKey)`);
  await trpcMutation(url, "admin.setPolicy", { tenantId: DEMO_TENANT, policy: DEMO_POLICY }, headers);
  narrator?.say(
    "set policy",
    "notes tools: allowed for the assistant, which is a trusted confirmation UI (token mode);\n" +
      "mailer tools: confirmed by the user on toolpact's own page (platform mode)  (admin.setPolicy)",
  );
  return { pluginKey: issued.key, keyId: issued.keyId };
}
