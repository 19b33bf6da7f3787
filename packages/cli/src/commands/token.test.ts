import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { jwtVerify } from "jose";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../cli-test-helpers.js";

const work = mkdtempSync(path.join(tmpdir(), "toolpact-token-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("TOOLPACT_")));
const secretText = randomBytes(32).toString("base64");
const secret = new Uint8Array(Buffer.from(secretText, "base64"));

/** A folder with its own toolpact.config.json. */
function project(name: string, config: object): string {
  const dir = path.join(work, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, "toolpact.config.json"), JSON.stringify(config));
  return dir;
}

describe("toolpact token (the real binary)", () => {
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
    const mint = () => runCli(["token", "--presence", "--user", "ada", "--tenant", "acme"], { cwd: dir, env });
    const [first, second] = await Promise.all([mint(), mint()]);
    const claims = await Promise.all(
      [first!, second!].map(async (run) => (await jwtVerify(run.stdout.trim(), secret, { issuer: "https://id.example.com", audience: "toolpact-presence" })).payload),
    );
    expect(claims[0]).toMatchObject({ sub: "ada", tid: "acme", jti: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(claims[0]!.jti).not.toBe(claims[1]!.jti);
    expect(claims[0]!.exp! - claims[0]!.iat!).toBe(120);
    const tooLong = await runCli(["token", "--presence", "--user", "ada", "--tenant", "acme", "--ttl", "601"], { cwd: dir, env });
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toMatch(/^toolpact token: --ttl is a whole number of seconds from 1 to 600 for a presence token, got "601"$/m);
  });

  it("reads the secret from the file TOOLPACT_ACTOR_SECRET_FILE names, as serve does", async () => {
    const dir = project("file", {});
    const file = path.join(dir, "actor-secret");
    writeFileSync(file, `${secretText}\n`);
    const run = await runCli(["token", "--user", "ada", "--tenant", "acme"], { cwd: dir, env: { ...env, TOOLPACT_ACTOR_SECRET_FILE: file } });
    expect(run.code).toBe(0);
    await expect(jwtVerify(run.stdout.trim(), secret, { issuer: "toolpact-dev", audience: "toolpact" })).resolves.toBeDefined();
    const both = await runCli(["token", "--user", "ada", "--tenant", "acme"], { cwd: dir, env: { ...env, TOOLPACT_ACTOR_SECRET_FILE: file, TOOLPACT_ACTOR_SECRET: secretText } });
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/both TOOLPACT_ACTOR_SECRET and TOOLPACT_ACTOR_SECRET_FILE are set/);
  });

  it("refuses to print a token without a secret, saying which one and where it is looked for", async () => {
    const dir = project("none", { actorIssuer: "https://id.example.com" });
    const run = await runCli(["token", "--user", "ada", "--tenant", "acme"], { cwd: dir, env });
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
    const noUser = await runCli(["token", "--tenant", "acme"], { cwd: dir, env: withSecret });
    expect([noUser.code, noUser.stderr.split("\n")[0]]).toEqual([2, "toolpact token: say who the token is for with --user <id>"]);
    const noTenant = await runCli(["token", "--user", "ada"], { cwd: dir, env: withSecret });
    expect([noTenant.code, noTenant.stderr.split("\n")[0]]).toEqual([
      2,
      "toolpact token: say which tenant with --tenant <id> (the secret comes from TOOLPACT_ACTOR_SECRET, which names no tenant)",
    ]);
    const level = await runCli(["token", "--user", "ada", "--tenant", "acme", "--level", "4"], { cwd: dir, env: withSecret });
    expect([level.code, level.stderr.split("\n")[0]]).toEqual([2, 'toolpact token: --level is an integer from 0 to 3, got "4"']);
  });
});
