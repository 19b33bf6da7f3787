import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runMain, preloadCommands } from "./cli-test-helpers.js";
import { isLoopbackHost, plainHttpProblem } from "./credential-safety.js";

beforeAll(() => preloadCommands("codegen", "mcp"), 180_000);

const work = mkdtempSync(path.join(tmpdir(), "toolpact-credentials-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const env = { PATH: process.env.PATH };

describe("credentials never go over plain http to another machine without --insecure", () => {
  it("knows this machine's names", () => {
    for (const host of ["localhost", "app.localhost", "127.0.0.1", "127.1.2.3", "[::1]", "::1"]) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ["example.com", "10.0.0.1", "0.0.0.0", "127.0.0.1.example.com", "localhost.example.com", "[::2]"])
      expect(isLoopbackHost(host), host).toBe(false);
    expect(plainHttpProblem("https://example.com", "--from", false)).toBeUndefined();
    expect(plainHttpProblem("http://127.0.0.1:4400", "--from", false)).toBeUndefined();
    expect(plainHttpProblem("http://example.com", "--from", true)).toBeUndefined();
  });

  it("codegen --from http://<remote> is refused before any credential is read; --insecure lets it through", async () => {
    const refused = await runMain(["codegen", "--out", "gen", "--from", "http://tools.example.com:4400"], { cwd: work, env });
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      "toolpact codegen: --from http://tools.example.com:4400 would send the plugin key and actor token unencrypted to tools.example.com:4400, " +
        "which is not this machine: use https://, or pass --insecure if the network between you is trusted; nothing was written",
    );
    // Past the check, the next thing it needs is the key (none is set here): proof it went on, without a network.
    const insecure = await runMain(["codegen", "--out", "gen", "--insecure", "--from", "http://tools.example.com:4400"], { cwd: work, env });
    expect(insecure.code).toBe(1);
    expect(insecure.stderr).toMatch(/^toolpact codegen: --from needs the calling plugin's plugin key: set TOOLPACT_PLUGIN_KEY/);
    const alone = await runMain(["codegen", "--out", "gen", "--insecure", "x.json"], { cwd: work, env });
    expect([alone.code, alone.stderr.split("\n")[0]]).toEqual([2, "toolpact codegen: --insecure goes with --from <url>"]);
  });

  it("toolpact mcp --url http://<remote> is refused; --insecure lets it through", async () => {
    const refused = await runMain(["mcp", "--url", "http://10.1.2.3:4400"], { cwd: work, env });
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      "toolpact mcp: --url http://10.1.2.3:4400 would send the plugin key and actor token unencrypted to 10.1.2.3:4400, " +
        "which is not this machine: use https://, or pass --insecure if the network between you is trusted",
    );
    const insecure = await runMain(["mcp", "--url", "http://10.1.2.3:4400", "--insecure"], { cwd: work, env });
    expect([insecure.code, insecure.stderr.split("\n")[0]]).toEqual([
      2,
      "toolpact mcp: no credentials: pass --credentials <file>, or set TOOLPACT_PLUGIN_KEY and TOOLPACT_ACTOR_TOKEN",
    ]);
  });
});

describe("a file holding a credential is readable by its owner alone", () => {
  const file = (name: string, text: string, mode: number) => {
    const at = path.join(work, name);
    writeFileSync(at, text);
    chmodSync(at, mode);
    return at;
  };

  it("codegen --plugin-key-file and --actor-token-file", async () => {
    file("key", "tpk_secret\n", 0o644);
    file("token", "ey.secret\n", 0o600);
    const run = await runMain(["codegen", "--out", "gen", "--from", "http://127.0.0.1:1", "--plugin-key-file", "key", "--actor-token-file", "token"], {
      cwd: work,
      env,
    });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      "toolpact codegen: key holds a plugin key but its group and other users may read or change it (mode 0644): run chmod 600 key, then try again; nothing was written",
    );
    file("token", "ey.secret\n", 0o620);
    chmodSync(path.join(work, "key"), 0o600);
    const group = await runMain(["codegen", "--out", "gen", "--from", "http://127.0.0.1:1", "--plugin-key-file", "key", "--actor-token-file", "token"], {
      cwd: work,
      env,
    });
    expect(group.stderr).toContain("token holds an actor token but its group may read or change it (mode 0620): run chmod 600 token");
    chmodSync(path.join(work, "token"), 0o600);
    const fine = await runMain(["codegen", "--out", "gen", "--from", "http://127.0.0.1:1", "--plugin-key-file", "key", "--actor-token-file", "token"], {
      cwd: work,
      env,
    });
    expect(fine.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:1/);
  });

  it("toolpact mcp --credentials", async () => {
    file("credentials.json", JSON.stringify({ pluginKey: "tpk_x", actorToken: "ey.x" }), 0o604);
    const run = await runMain(["mcp", "--url", "http://127.0.0.1:1", "--credentials", "credentials.json"], { cwd: work, env });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      "toolpact mcp: credentials.json holds a plugin key and an actor token but other users may read or change it (mode 0604): run chmod 600 credentials.json, then try again",
    );
  });
});
