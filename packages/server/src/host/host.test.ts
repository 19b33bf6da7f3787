import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { SignJWT } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createServer } from "node:net";
import { loadHostConfig, type HostConfig } from "./config.js";
import { describeDatabase, migrateDatabase } from "./database.js";
import { HostError } from "./host-error.js";
import { SECRET_ENV_VARS, readSecrets } from "./secrets.js";
import { startHost } from "./start-host.js";

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

  it("refuses an actorJwksUrl over plain http to a host that is not loopback, unless insecure is set", async () => {
    for (const jwks of ["http://id.example/.well-known/jwks.json", "http://10.0.0.5/jwks", "http://127.0.0.1.evil.example/jwks", "http://[::2]/jwks"]) {
      writeConfig({ actorIssuer: "https://id.example", actorJwksUrl: jwks });
      const error = await hostError(() => loadHostConfig({ cwd: dir, env: {} }));
      expect(error.message, jwks).toBe(
        `toolpact.config.json: "actorJwksUrl" ${jwks} is plain http to a host that is not loopback: the keys that verify actor ` +
          'tokens could be swapped on the way. Use an https URL, or set "insecure": true if this network is trusted',
      );
      writeConfig({ actorIssuer: "https://id.example", actorJwksUrl: jwks, insecure: true });
      expect((await loadHostConfig({ cwd: dir, env: {} })).actorJwksUrl, jwks).toBe(jwks);
    }
    for (const jwks of ["https://id.example/jwks", "http://127.0.0.1:9000/jwks", "http://localhost/jwks", "http://[::1]:8080/jwks", "http://127.4.5.6/jwks"]) {
      writeConfig({ actorIssuer: "https://id.example", actorJwksUrl: jwks });
      expect((await loadHostConfig({ cwd: dir, env: {} })).actorJwksUrl, jwks).toBe(jwks);
    }
    writeConfig({ actorIssuer: "https://id.example", insecure: "yes" });
    expect((await hostError(() => loadHostConfig({ cwd: dir, env: {} }))).details.join("\n")).toMatch(/insecure/);
  });

  it("reads the per-caller bounds, and refuses them out of range", async () => {
    writeConfig({ limits: { maxRequestsPerCaller: 64, maxLongPollsPerCaller: 8 } });
    expect((await loadHostConfig({ cwd: dir, env: {} })).limits).toMatchObject({ maxRequestsPerCaller: 64, maxLongPollsPerCaller: 8 });
    writeConfig({ limits: { maxRequestsPerCaller: 0, maxLongPollsPerCaller: 1.5 } });
    const details = (await hostError(() => loadHostConfig({ cwd: dir }))).details.join("\n");
    expect(details).toMatch(/limits\.maxRequestsPerCaller/);
    expect(details).toMatch(/limits\.maxLongPollsPerCaller/);
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

  it("reads PostgreSQL settings and retention, keeps a postgres:// URL as it is, and refuses bad values", async () => {
    writeConfig({
      database: "postgres://app:pw@db.internal:5432/toolpact",
      databaseOptions: { schema: "tenant_a", poolSize: 20, connectionTimeoutMs: 1500, statementTimeoutMs: 3000 },
      retention: { activityDays: 30, confirmationHours: 12, outboxDays: 3, idempotencyHours: 48, pruneIntervalMs: 600_000 },
    });
    const config = await loadHostConfig({ cwd: dir, env: {} });
    expect(config.database).toBe("postgres://app:pw@db.internal:5432/toolpact");
    expect(config.databaseOptions).toEqual({ schema: "tenant_a", poolSize: 20, connectionTimeoutMs: 1500, statementTimeoutMs: 3000 });
    expect(config.retention).toEqual({ activityDays: 30, confirmationHours: 12, outboxDays: 3, idempotencyHours: 48, pruneIntervalMs: 600_000 });
    expect((await loadHostConfig({ cwd: dir, env: { TOOLPACT_DATABASE_URL: "postgresql://other/db" } })).database).toBe("postgresql://other/db");

    writeConfig({
      database: "postgres://db.internal/toolpact",
      databaseOptions: { schema: "Bad-Name; DROP", poolSize: 0, statementTimeoutMs: 5, sslmode: "x" },
      retention: { activityDays: 0, pruneIntervalMs: 20 },
    });
    const details = (await hostError(() => loadHostConfig({ cwd: dir, env: {} }))).details.join("\n");
    for (const field of ["databaseOptions.schema", "databaseOptions.poolSize", "databaseOptions.statementTimeoutMs", "sslmode", "retention.activityDays"]) {
      expect(details).toContain(field);
    }
    expect(details).toMatch(/retention\.pruneIntervalMs: must be 0 \(pruning off\) or at least 100/);
  });

  it("refuses PostgreSQL settings when the database is a SQLite file, naming each", async () => {
    writeConfig({ databaseOptions: { schema: "app", poolSize: 4 } });
    const error = await hostError(() => loadHostConfig({ cwd: dir, env: {} }));
    expect(error.message).toMatch(/"databaseOptions" holds PostgreSQL settings, but the database is a SQLite file/);
    expect(error.details).toEqual([
      "toolpact.config.json: databaseOptions.schema: applies to PostgreSQL only",
      "toolpact.config.json: databaseOptions.poolSize: applies to PostgreSQL only",
    ]);
    // The same settings are fine once the environment names a PostgreSQL database.
    const config = await loadHostConfig({ cwd: dir, env: { TOOLPACT_DATABASE_URL: "postgres://db.internal/app" } });
    expect(config.databaseOptions).toEqual({ schema: "app", poolSize: 4 });
  });
});

describe("describeDatabase", () => {
  it("names the store and never shows a password or URL parameters", () => {
    expect(describeDatabase("/srv/toolpact.db")).toBe("SQLite /srv/toolpact.db");
    expect(describeDatabase("postgres://app:s3cret@db:5432/toolpact?sslmode=require&password=also", { schema: "tp" })).toBe(
      "PostgreSQL postgres://app@db:5432/toolpact (schema tp)",
    );
    expect(describeDatabase("postgresql://db/toolpact")).toBe("PostgreSQL postgresql://db/toolpact");
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
      // The plugin sees ordinary TOOLPACT_* variables (CI sets TOOLPACT_TEST_PG_URL, say), never a secret.
      expect(seen).toContain("TOOLPACT_VISIBLE");
      expect(seen.filter((name) => (SECRET_ENV_VARS as readonly string[]).includes(name))).toEqual([]);
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

  it("refuses a plugin without a module or without activate, and a duplicate id", async () => {
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
  });

  it("an unreachable PostgreSQL database stops start-up and migrate within seconds, naming it without the password", async () => {
    const database = `postgres://app:pw-${randomBytes(8).toString("hex")}@127.0.0.1:${await closedPort()}/toolpact`;
    const password = new URL(database).password;
    const started = performance.now();
    const error = await hostError(async () => startHost({ config: await configWith({ database }), env: goodEnv() }));
    expect(performance.now() - started).toBeLessThan(4000);
    expect(error.message).toMatch(/^the database \(PostgreSQL postgres:\/\/app@127\.0\.0\.1:\d+\/toolpact\) could not be opened: .*unreachable/);
    expect(error.message).not.toContain(password);
    const migrate = await hostError(() => migrateDatabase(database, { schema: "app" }));
    expect(migrate.message).toMatch(/^PostgreSQL postgres:\/\/app@127\.0\.0\.1:\d+\/toolpact \(schema app\) could not be migrated: .*unreachable/);
    expect(migrate.message).not.toContain(password);
  });

  it("runs the pruning job with the configured retention (SQLite here; PostgreSQL in test/integration)", async () => {
    const config = await configWith({ database: "./prune.db", retention: { activityDays: 1 / 86_400, pruneIntervalMs: 100 } });
    const host = await startHost({ config, env: goodEnv() });
    try {
      await host.runtime.admin.setPolicy("t-prune", { rules: [] });
      expect((await host.runtime.admin.listActivity("t-prune")).events).toHaveLength(1);
      const deadline = Date.now() + 5000;
      while ((await host.runtime.admin.listActivity("t-prune")).events.length > 0) {
        if (Date.now() > deadline) throw new Error("the pruning job did not delete the event within 5 s");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await host.close();
    }
  });

  it("migrateDatabase creates and migrates a SQLite file, and again changes nothing", async () => {
    const file = path.join(dir, "data", "migrated.db");
    expect(await migrateDatabase(file)).toEqual({ database: `SQLite ${file}`, applied: undefined });
    expect(readFileSyncOrUndefined(file)).toBeDefined();
    expect(await migrateDatabase(file)).toEqual({ database: `SQLite ${file}`, applied: undefined });
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
      const presence = await new SignJWT({ tid: "t1", jti: randomUUID() })
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
      expect(setCookie).toMatch(/^__Secure-toolpact-confirm=[^;]+; Path=\/base\/confirm; Max-Age=1[12]\d; HttpOnly; SameSite=Strict; Secure$/);
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

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no address");
  return address.port;
}

function readFileSyncOrUndefined(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
