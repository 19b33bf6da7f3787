import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, runMain, preloadCommands } from "../cli-test-helpers.js";

beforeAll(() => preloadCommands("token"), 180_000);

const work = mkdtempSync(path.join(tmpdir(), "toolpact-token-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("TOOLPACT_")));
const secretText = randomBytes(32).toString("base64");
const secret = new Uint8Array(Buffer.from(secretText, "base64"));

/** A folder with its own toolpact.config.json. */
function project(name: string, config: object): string {
  const dir = path.join(work, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, "toolpact.config.json"), JSON.stringify(config), { mode: 0o600 });
  return dir;
}

describe("toolpact token (in process; the first case runs the real binary)", () => {
  it("mints an actor token from TOOLPACT_ACTOR_SECRET with the config's issuer and every claim asked for", async () => {
    const dir = project("actor", { actorIssuer: "https://id.example.com" });
    const run = await runCli(["token", "--user", "ada", "--tenant", "acme", "--level", "2", "--roles", "admin, editor", "--caller", "com.example.assistant"], {
      cwd: dir,
      env: { ...env, TOOLPACT_ACTOR_SECRET: secretText },
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const { payload, protectedHeader } = await jwtVerify(run.stdout.trim(), secret, { issuer: "https://id.example.com", audience: "toolpact" });
    expect(protectedHeader.alg).toBe("HS256");
    expect(payload).toMatchObject({ sub: "ada", tid: "acme", lvl: 2, roles: ["admin", "editor"], azp: "com.example.assistant" });
    expect(payload.exp! - payload.iat!).toBe(900);
  });

  it("mints single-use presence tokens: a fresh jti each time, at most 600 s", async () => {
    const dir = project("presence", { actorIssuer: "https://id.example.com", secrets: { actorSecret: secretText } });
    const mint = () => runMain(["token", "--presence", "--user", "ada", "--tenant", "acme"], { cwd: dir, env });
    const [first, second] = await Promise.all([mint(), mint()]);
    const claims = await Promise.all(
      [first!, second!].map(
        async (run) => (await jwtVerify(run.stdout.trim(), secret, { issuer: "https://id.example.com", audience: "toolpact-presence" })).payload,
      ),
    );
    expect(claims[0]).toMatchObject({ sub: "ada", tid: "acme", jti: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(claims[0]!.jti).not.toBe(claims[1]!.jti);
    expect(claims[0]!.exp! - claims[0]!.iat!).toBe(120);
    const tooLong = await runMain(["token", "--presence", "--user", "ada", "--tenant", "acme", "--ttl", "601"], { cwd: dir, env });
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toMatch(/^toolpact token: --ttl is a whole number of seconds from 1 to 600 for a presence token, got "601"$/m);
  });

  it("reads the secret from the file TOOLPACT_ACTOR_SECRET_FILE names, as serve does", async () => {
    const dir = project("file", {});
    const file = path.join(dir, "actor-secret");
    writeFileSync(file, `${secretText}\n`, { mode: 0o600 });
    const run = await runMain(["token", "--user", "ada", "--tenant", "acme"], { cwd: dir, env: { ...env, TOOLPACT_ACTOR_SECRET_FILE: file } });
    expect(run.code).toBe(0);
    await expect(jwtVerify(run.stdout.trim(), secret, { issuer: "toolpact-dev", audience: "toolpact" })).resolves.toBeDefined();
    const both = await runMain(["token", "--user", "ada", "--tenant", "acme"], {
      cwd: dir,
      env: { ...env, TOOLPACT_ACTOR_SECRET_FILE: file, TOOLPACT_ACTOR_SECRET: secretText },
    });
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/both TOOLPACT_ACTOR_SECRET and TOOLPACT_ACTOR_SECRET_FILE are set/);
  });

  it("refuses to print a token without a secret, saying which one and where it is looked for", async () => {
    const dir = project("none", { actorIssuer: "https://id.example.com" });
    const run = await runMain(["token", "--user", "ada", "--tenant", "acme"], { cwd: dir, env });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr.trim()).toBe(
      'toolpact token: the actor token secret is not set: set TOOLPACT_ACTOR_SECRET (or TOOLPACT_ACTOR_SECRET_FILE, or "secrets.actorSecret" in toolpact.config.json) ' +
        "to the secret your server verifies actor tokens with, or start `toolpact dev` in this folder and mint tokens for it",
    );
  });

  it("refuses a token without a user or tenant, or with a level outside 0..3 (usage errors, exit 2)", async () => {
    const dir = project("usage", {});
    const withSecret = { ...env, TOOLPACT_ACTOR_SECRET: secretText };
    const noUser = await runMain(["token", "--tenant", "acme"], { cwd: dir, env: withSecret });
    expect([noUser.code, noUser.stderr.split("\n")[0]]).toEqual([2, "toolpact token: say who the token is for with --user <id>"]);
    const noTenant = await runMain(["token", "--user", "ada"], { cwd: dir, env: withSecret });
    expect([noTenant.code, noTenant.stderr.split("\n")[0]]).toEqual([
      2,
      "toolpact token: say which tenant with --tenant <id> (the secret comes from TOOLPACT_ACTOR_SECRET, which names no tenant)",
    ]);
    const level = await runMain(["token", "--user", "ada", "--tenant", "acme", "--level", "4"], { cwd: dir, env: withSecret });
    expect([level.code, level.stderr.split("\n")[0]]).toEqual([2, 'toolpact token: --level is an integer from 0 to 3, got "4"']);
  });

  it("bounds an actor token's lifetime to 24 hours (86400 s)", async () => {
    const dir = project("ttl", {});
    const withSecret = { ...env, TOOLPACT_ACTOR_SECRET: secretText };
    const day = await runMain(["token", "--user", "ada", "--tenant", "acme", "--ttl", "86400"], { cwd: dir, env: withSecret });
    expect(day.code).toBe(0);
    const { payload } = await jwtVerify(day.stdout.trim(), secret, { issuer: "toolpact-dev", audience: "toolpact" });
    expect(payload.exp! - payload.iat!).toBe(86_400);
    for (const ttl of ["86401", "3153600000"]) {
      const tooLong = await runMain(["token", "--user", "ada", "--tenant", "acme", "--ttl", ttl], { cwd: dir, env: withSecret });
      expect([tooLong.code, tooLong.stdout, tooLong.stderr.split("\n")[0]]).toEqual([
        2,
        "",
        `toolpact token: --ttl is a whole number of seconds from 1 to 86400 for an actor token (24 hours), got "${ttl}"`,
      ]);
    }
  });

  it("refuses a secret shorter than 32 bytes, wherever it comes from", async () => {
    const dir = project("short", {});
    for (const bytes of [1, 31]) {
      const run = await runMain(["token", "--user", "ada", "--tenant", "acme"], {
        cwd: dir,
        env: { ...env, TOOLPACT_ACTOR_SECRET: randomBytes(bytes).toString("base64") },
      });
      expect([run.code, run.stdout, run.stderr.trim()]).toEqual([
        1,
        "",
        `toolpact token: the actor secret from TOOLPACT_ACTOR_SECRET is ${bytes} byte${bytes === 1 ? "" : "s"} long; HS256 needs at least 32: ` +
          "generate one with `openssl rand -base64 32` and configure the server with it too",
      ]);
    }
    const inConfig = project("short-config", { secrets: { actorSecret: randomBytes(8).toString("base64") } });
    const run = await runMain(["token", "--user", "ada", "--tenant", "acme"], { cwd: inConfig, env });
    expect(run.stderr).toMatch(
      /^toolpact token: the actor secret from "secrets\.actorSecret" in toolpact\.config\.json is 8 bytes long; HS256 needs at least 32/,
    );
  });

  it("refuses a secret in a file its group or other users can read, naming the fix", async () => {
    const dir = project("modes", { secrets: { actorSecret: secretText } });
    chmodSync(path.join(dir, "toolpact.config.json"), 0o644);
    const config = await runMain(["token", "--user", "ada", "--tenant", "acme"], { cwd: dir, env });
    expect([config.code, config.stdout, config.stderr.trim()]).toEqual([
      1,
      "",
      "toolpact token: toolpact.config.json holds the actor secret but its group and other users may read or change it (mode 0644): run chmod 600 toolpact.config.json, then try again",
    ]);
    const file = path.join(dir, "actor-secret");
    writeFileSync(file, secretText, { mode: 0o640 });
    chmodSync(file, 0o640);
    const fromFile = await runMain(["token", "--user", "ada", "--tenant", "acme"], { cwd: dir, env: { ...env, TOOLPACT_ACTOR_SECRET_FILE: file } });
    expect(fromFile.code).toBe(1);
    expect(fromFile.stderr.trim()).toBe(
      `toolpact token: ${file} holds the actor secret but its group may read or change it (mode 0640): run chmod 600 ${file}, then try again`,
    );
  });

  it("refuses the secret a stopped `toolpact dev` left behind, and uses it while that dev runs", async () => {
    const dir = project("stale-dev", {});
    rmSync(path.join(dir, "toolpact.config.json"));
    const state = path.join(dir, ".toolpact/dev");
    mkdirSync(state, { recursive: true });
    writeFileSync(path.join(state, "toolpact.config.json"), JSON.stringify({ actorIssuer: "toolpact-dev", secrets: { actorSecret: secretText } }), {
      mode: 0o600,
    });
    // A process that has exited: its pid names no live process now.
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout;
    writeFileSync(path.join(state, "pid"), `${gone}\n`);
    const stale = await runMain(["token", "--user", "ada"], { cwd: dir, env });
    expect([stale.code, stale.stdout, stale.stderr.trim()]).toEqual([
      1,
      "",
      `toolpact token: the secret in .toolpact/dev/toolpact.config.json is stale: the \`toolpact dev\` that made it (pid ${gone}) is no longer running, ` +
        "so no server accepts its tokens; start `toolpact dev` in this folder again (it replaces the stale state), or set TOOLPACT_ACTOR_SECRET",
    ]);
    rmSync(path.join(state, "pid"));
    expect((await runMain(["token", "--user", "ada"], { cwd: dir, env })).stderr).toContain("the `toolpact dev` that made it is no longer running");
    writeFileSync(path.join(state, "pid"), `${process.pid}\n`);
    const live = await runMain(["token", "--user", "ada"], { cwd: dir, env });
    expect(live.code).toBe(0);
    const { payload } = await jwtVerify(live.stdout.trim(), secret, { issuer: "toolpact-dev", audience: "toolpact" });
    expect(payload.tid).toBe("dev");
  });
});
