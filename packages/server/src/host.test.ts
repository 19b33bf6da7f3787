import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { SignJWT } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HostError, SECRET_ENV_VARS, loadHostConfig, readSecrets, startHost, type HostConfig } from "./host.js";

let dir: string;
const savedEnv = { ...process.env };

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-host-"));
});

afterEach(() => {
  for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
  Object.assign(process.env, savedEnv);
  rmSync(dir, { recursive: true, force: true });
});

const b64 = (bytes = 32) => randomBytes(bytes).toString("base64");

function goodEnv(): Record<string, string> {
  return {
    TOOLPACT_ADMIN_KEY: randomBytes(32).toString("base64url"),
    TOOLPACT_ACTOR_SECRET: b64(),
    TOOLPACT_SIGNING_KEYS: `k1:${b64()}`,
    TOOLPACT_STORAGE_KEY: b64(),
  };
}

function writeConfig(config: Record<string, unknown>): string {
  const file = path.join(dir, "toolpact.config.json");
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** A plugin folder whose activate records which secret variables it can see. */
function writePlugin(name: string, manifest: Record<string, unknown>, activate = ""): string {
  const folder = path.join(dir, "plugins", name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, "plugin.json"), JSON.stringify(manifest, null, 2));
  writeFileSync(path.join(folder, "package.json"), JSON.stringify({ type: "module", main: "./main.js" }));
  writeFileSync(
    path.join(folder, "main.js"),
    `import { writeFileSync } from "node:fs";
export function activate(sdk) {
  writeFileSync(new URL("./seen-env.json", import.meta.url), JSON.stringify(Object.keys(process.env).filter((k) => k.startsWith("TOOLPACT_"))));
  ${activate}
}
`,
  );
  return folder;
}

const providerManifest = {
  id: "com.example.echo",
  version: "1.0.0",
  permissions: ["tools:provide"],
  tools: [{ name: "echo", effect: "read", inputSchema: { type: "object" } }],
};

async function configWith(extra: Record<string, unknown> = {}): Promise<HostConfig> {
  writeConfig({ actorIssuer: "https://id.example", port: 0, ...extra });
  return loadHostConfig({ cwd: dir });
}

async function hostError(run: () => unknown): Promise<HostError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(HostError);
    return error as HostError;
  }
  throw new Error("expected a HostError");
}

describe("loadHostConfig", () => {
  it("fills in defaults and resolves paths against the config file's folder", async () => {
    writeConfig({ plugins: ["./plugins/a"], actorIssuer: "https://id.example" });
    const config = await loadHostConfig({ cwd: dir, env: {} });
    expect(config).toMatchObject({
      plugins: [path.join(dir, "plugins", "a")],
      database: path.join(dir, ".toolpact", "toolpact.db"),
      host: "127.0.0.1",
      port: 4400,
      actorIssuer: "https://id.example",
      limits: { maxBodyBytes: 1024 * 1024 },
    });
  });

  it("lets the command line and TOOLPACT_DATABASE_URL override the file", async () => {
    writeConfig({ database: "./data/db.sqlite", host: "127.0.0.2", port: 1 });
    expect(await loadHostConfig({ cwd: dir, env: {}, port: 0, host: "127.0.0.1" })).toMatchObject({ port: 0, host: "127.0.0.1" });
    expect((await loadHostConfig({ cwd: dir, env: { TOOLPACT_DATABASE_URL: "/tmp/elsewhere.db" } })).database).toBe("/tmp/elsewhere.db");
    expect((await loadHostConfig({ cwd: dir, env: {}, database: "rel.db" })).database).toBe(path.join(dir, "rel.db"));
  });

  it("refuses a missing config unless allowed, and lists every invalid field", async () => {
    expect((await hostError(() => loadHostConfig({ cwd: dir }))).message).toMatch(/toolpact\.config\.json not found/);
    expect((await loadHostConfig({ cwd: dir, allowMissing: true, env: {} })).plugins).toEqual([]);
    expect((await hostError(() => loadHostConfig({ cwd: dir, file: "other.json", allowMissing: true }))).message).toMatch(/other\.json not found/);
    writeConfig({ port: "80", plugin: [], limits: { maxBodyBytes: 1 } });
    const error = await hostError(() => loadHostConfig({ cwd: dir }));
    expect(error.details.join("\n")).toMatch(/port/);
    expect(error.details.join("\n")).toMatch(/plugin/);
    expect(error.details.join("\n")).toMatch(/limits\.maxBodyBytes/);
    writeFileSync(path.join(dir, "toolpact.config.json"), "{ not json");
    expect((await hostError(() => loadHostConfig({ cwd: dir }))).message).toMatch(/not valid JSON/);
  });

  it("reads rate limits, lease and recovery timing and the session TTL, and refuses values out of range", async () => {
    writeConfig({
      limits: { leaseMs: 2000, recoveryIntervalMs: 500, sessionTtlSeconds: 300, rateLimits: { previewsPerMinute: 10, pendingConfirmations: 2 } },
    });
    expect((await loadHostConfig({ cwd: dir, env: {} })).limits).toEqual({
      maxBodyBytes: 1024 * 1024,
      leaseMs: 2000,
      recoveryIntervalMs: 500,
      sessionTtlSeconds: 300,
      rateLimits: { previewsPerMinute: 10, pendingConfirmations: 2 },
    });
    writeConfig({ limits: { leaseMs: 10, sessionTtlSeconds: 5, rateLimits: { previewsPerMinute: 0, burst: 3 } } });
    const details = (await hostError(() => loadHostConfig({ cwd: dir }))).details.join("\n");
    expect(details).toMatch(/limits\.leaseMs/);
    expect(details).toMatch(/limits\.sessionTtlSeconds/);
    expect(details).toMatch(/limits\.rateLimits\.previewsPerMinute/);
    expect(details).toMatch(/burst/);
  });
});

describe("readSecrets", () => {
  it("names each missing secret, never starting with a default", async () => {
    const config = await configWith();
    for (const name of ["TOOLPACT_ADMIN_KEY", "TOOLPACT_SIGNING_KEYS", "TOOLPACT_STORAGE_KEY", "TOOLPACT_ACTOR_SECRET"]) {
      const env: NodeJS.ProcessEnv = goodEnv();
      delete env[name];
      expect((await hostError(() => readSecrets(config, { env }))).message).toContain(name);
    }
  });

  it("refuses a key shorter than 32 bytes, a secret used twice, and text that is not base64", async () => {
    const config = await configWith();
    const cases: [Record<string, string>, RegExp][] = [
      [{ TOOLPACT_STORAGE_KEY: b64(16) }, /storage key.*32 bytes/],
      [{ TOOLPACT_SIGNING_KEYS: `k1:${b64(16)}` }, /signing key "k1" is too short/],
      [{ TOOLPACT_ACTOR_SECRET: b64(31) }, /actor token secret.*too short/],
      [{ TOOLPACT_ADMIN_KEY: "short" }, /admin key.*too short/],
      [{ TOOLPACT_SIGNING_KEYS: "k1:not base64!" }, /not base64/],
      [{ TOOLPACT_STORAGE_KEY: "%%%" }, /TOOLPACT_STORAGE_KEY is not base64/],
    ];
    for (const [change, message] of cases) {
      expect((await hostError(() => readSecrets(config, { env: { ...goodEnv(), ...change } }))).message).toMatch(message);
    }
    const shared = b64();
    const reused = { ...goodEnv(), TOOLPACT_ACTOR_SECRET: shared, TOOLPACT_STORAGE_KEY: shared };
    expect((await hostError(() => readSecrets(config, { env: reused }))).message).toMatch(/same secret/);
    const reusedSigning = { ...goodEnv(), TOOLPACT_SIGNING_KEYS: `k1:${shared}`, TOOLPACT_STORAGE_KEY: shared };
    expect((await hostError(() => readSecrets(config, { env: reusedSigning }))).message).toMatch(/same secret/);
  });

  it("removes every secret variable from the environment, also when it refuses them", async () => {
    const config = await configWith();
    const env: NodeJS.ProcessEnv = { ...goodEnv(), TOOLPACT_DATABASE_URL: "/tmp/x.db", TOOLPACT_OTHER: "kept", PATH: "/bin" };
    const secrets = readSecrets(config, { env });
    expect(secrets.signingKeys[0]!.kid).toBe("k1");
    expect(Object.keys(env).sort()).toEqual(["PATH", "TOOLPACT_OTHER"]);
    const bad: NodeJS.ProcessEnv = { ...goodEnv(), TOOLPACT_STORAGE_KEY: b64(8) };
    await hostError(() => readSecrets(config, { env: bad }));
    expect(Object.keys(bad).filter((key) => (SECRET_ENV_VARS as readonly string[]).includes(key))).toEqual([]);
  });

  it("takes secrets from the config file when the environment has none; the environment wins", async () => {
    const fromFile = goodEnv();
    const config = await configWith({
      secrets: {
        adminKey: fromFile.TOOLPACT_ADMIN_KEY,
        actorSecret: fromFile.TOOLPACT_ACTOR_SECRET,
        signingKeys: fromFile.TOOLPACT_SIGNING_KEYS,
        storageKey: fromFile.TOOLPACT_STORAGE_KEY,
      },
    });
    expect(readSecrets(config, { env: {} }).adminKey).toBe(fromFile.TOOLPACT_ADMIN_KEY);
    const env = goodEnv();
    expect(readSecrets(config, { env: { ...env } }).adminKey).toBe(env.TOOLPACT_ADMIN_KEY);
  });

  it("--dev generates throwaway secrets for the missing ones and reports them", async () => {
    const config = await configWith();
    const secrets = readSecrets(config, { env: {}, dev: true });
    expect(secrets.generated.map((line) => line.split("=")[0])).toEqual([
      "TOOLPACT_ADMIN_KEY",
      "TOOLPACT_SIGNING_KEYS",
      "TOOLPACT_STORAGE_KEY",
      "TOOLPACT_ACTOR_SECRET",
    ]);
    expect(secrets.storageKey.byteLength).toBe(32);
    const again = readSecrets(config, { env: {}, dev: true });
    expect(again.adminKey).not.toBe(secrets.adminKey);
  });
});

describe("startHost", () => {
  it("loads plugins after removing the secrets from process.env, activates them and serves", async () => {
    const folder = writePlugin("echo", providerManifest, 'sdk.tools.provide("echo", { execute: (input) => input });');
    const config = await configWith({ plugins: [folder], database: "./db/toolpact.db" });
    Object.assign(process.env, goodEnv(), { TOOLPACT_VISIBLE: "not a secret" });
    const host = await startHost({ config });
    try {
      const seen = JSON.parse(readFileSync(path.join(folder, "seen-env.json"), "utf8")) as string[];
      expect(seen).toEqual(["TOOLPACT_VISIBLE"]);
      for (const name of SECRET_ENV_VARS) expect(process.env[name]).toBeUndefined();
      expect(host.plugins.map((plugin) => plugin.id)).toEqual(["com.example.echo"]);
      expect(host.runtime.manifests.has("com.example.echo")).toBe(true);
      const health = await fetch(`${host.url}/healthz`);
      expect(health.status).toBe(200);
      expect((await fetch(`${host.url}/readyz`)).status).toBe(200);
    } finally {
      await host.close();
    }
  });

  it("refuses invalid manifests with file:line:col diagnostics and starts nothing", async () => {
    const broken = writePlugin("broken", { ...providerManifest, id: "Bad Id", tools: [{ name: "echo", effect: "wrte", inputSchema: {} }] });
    const good = writePlugin("good", { ...providerManifest, id: "com.example.good" });
    const config = await configWith({ plugins: [good, broken] });
    const error = await hostError(() => startHost({ config, env: goodEnv() }));
    expect(error.message).toMatch(/invalid: nothing was started/);
    const text = error.details.join("\n");
    expect(text).toMatch(/plugin\.json:\d+:\d+/);
    expect(text).toMatch(/wrte|effect/);
    expect(readFileSyncOrUndefined(path.join(good, "seen-env.json"))).toBeUndefined();
  });

  it("refuses a plugin without a module or without activate, a duplicate id, and a PostgreSQL URL", async () => {
    const noModule = path.join(dir, "plugins", "bare");
    mkdirSync(noModule, { recursive: true });
    writeFileSync(path.join(noModule, "plugin.json"), JSON.stringify(providerManifest));
    expect((await hostError(async () => startHost({ config: await configWith({ plugins: [noModule] }), env: goodEnv() }))).details.join("\n")).toMatch(
      /no plugin module/,
    );
    const noActivate = writePlugin("inert", { ...providerManifest, id: "com.example.inert" });
    writeFileSync(path.join(noActivate, "main.js"), "export const nothing = 1;\n");
    expect((await hostError(async () => startHost({ config: await configWith({ plugins: [noActivate] }), env: goodEnv() }))).message).toMatch(
      /exports no activate/,
    );
    const a = writePlugin("a", providerManifest);
    const b = writePlugin("b", providerManifest);
    expect((await hostError(async () => startHost({ config: await configWith({ plugins: [a, b] }), env: goodEnv() }))).details.join("\n")).toMatch(
      /already loaded/,
    );
    expect((await hostError(async () => startHost({ config: await configWith({ database: "postgres://db.example/toolpact" }), env: goodEnv() }))).message).toMatch(
      /PostgreSQL is not supported yet/,
    );
  });

  it("refuses a plugin that provides a tool its manifest does not declare", async () => {
    const folder = writePlugin("sneaky", providerManifest, 'sdk.tools.provide("undeclared", { execute: () => 1 });');
    const error = await hostError(async () => startHost({ config: await configWith({ plugins: [folder] }), env: goodEnv() }));
    expect(error.message).toMatch(/com\.example\.echo.*activate\(sdk\) failed/);
  });

  it("accepts a confirmation session on every host sharing the signing key, and on no other", async () => {
    const env = goodEnv();
    const actorSecret = Buffer.from(env.TOOLPACT_ACTOR_SECRET!, "base64");
    const start = async (name: string, secrets: Record<string, string>) =>
      startHost({ config: await configWith({ database: `./${name}.db`, publicUrl: "https://confirm.example/base" }), env: { ...secrets } });
    const first = await start("a", env);
    const second = await start("b", { ...env, TOOLPACT_STORAGE_KEY: b64() });
    const other = await start("c", { ...env, TOOLPACT_SIGNING_KEYS: `k1:${b64()}` });
    try {
      expect(first.publicUrl).toBe("https://confirm.example/base");
      const presence = await new SignJWT({ tid: "t1" })
        .setProtectedHeader({ alg: "HS256" })
        .setIssuer("https://id.example")
        .setAudience("toolpact-presence")
        .setSubject("user-1")
        .setIssuedAt()
        .setExpirationTime("2m")
        .sign(actorSecret);
      const signIn = await fetch(`${first.url}/confirm/session?token=${presence}`);
      expect(signIn.status).toBe(200);
      const setCookie = signIn.headers.get("set-cookie")!;
      expect(setCookie).toMatch(/^__Secure-toolpact-confirm=[^;]+; Path=\/base\/confirm; Max-Age=600; HttpOnly; SameSite=Strict; Secure$/);
      const cookie = setCookie.split(";")[0]!;
      const requestId = "019b0000-0000-7000-8000-000000000000";
      const page = (url: string) => fetch(`${url}/confirm/${requestId}`, { headers: { cookie } });
      // Signed in on both instances sharing the key (no such request: 403, not the 401 of no session).
      expect((await page(first.url)).status).toBe(403);
      expect((await page(second.url)).status).toBe(403);
      expect((await page(other.url)).status).toBe(401);
    } finally {
      await Promise.all([first.close(), second.close(), other.close()]);
    }
  });

  it("requires actorIssuer outside --dev", async () => {
    writeConfig({ port: 0 });
    const config = await loadHostConfig({ cwd: dir, env: {} });
    expect((await hostError(() => startHost({ config, env: goodEnv() }))).message).toMatch(/actorIssuer/);
  });
});

function readFileSyncOrUndefined(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
