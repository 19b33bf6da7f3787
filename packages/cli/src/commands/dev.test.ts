import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, approveOnPage, runCli, runMain, startCli, trpc, preloadCommands } from "../cli-test-helpers.js";

beforeAll(() => preloadCommands("dev"), 180_000);

const work = mkdtempSync(path.join(tmpdir(), "toolpact-dev-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const PROVIDER = "com.example.todo";
const CALLER = "com.example.assistant";

/** The to-do manifest; `description` describes add-item. */
function todoManifest(description = "Add an item to the list."): string {
  const object = (properties: object, required: string[] = []) => ({ type: "object", properties, required, additionalProperties: false });
  const tools = [
    { name: "add-item", description, effect: "write", inputSchema: object({ text: { type: "string", minLength: 1 } }, ["text"]) },
    { name: "list-items", effect: "read", inputSchema: object({}), outputSchema: object({ items: { type: "array", items: { type: "string" } } }, ["items"]) },
  ];
  return JSON.stringify({ id: PROVIDER, version: "1.0.0", permissions: ["tools:provide"], tools }, null, 2);
}

/**
 * A provider folder as plain JavaScript (its module needs no compiler) whose build script regenerates
 * its typed clients, and a caller folder that is a manifest only (it calls over HTTP).
 */
function writeProject(root: string): { provider: string; caller: string } {
  const provider = path.join(root, "todo");
  const caller = path.join(root, "assistant");
  mkdirSync(provider, { recursive: true });
  mkdirSync(caller, { recursive: true });
  writeFileSync(path.join(provider, "plugin.json"), todoManifest());
  writeFileSync(
    path.join(provider, "package.json"),
    JSON.stringify({
      name: "todo",
      type: "module",
      main: "index.js",
      scripts: { build: `node ${JSON.stringify(BIN)} codegen --out src/generated plugin.json` },
    }),
  );
  writeFileSync(
    path.join(provider, "index.js"),
    [
      "const lists = new Map();",
      "export function activate(sdk) {",
      '  sdk.tools.provide("add-item", {',
      '    preview: (input) => ({ summary: `Add "${input.text}"` }),',
      "    execute: (input, ctx) => {",
      "      lists.set(ctx.actor.userId, [...(lists.get(ctx.actor.userId) ?? []), input.text]);",
      "      return { id: ctx.operationId };",
      "    },",
      "  });",
      '  sdk.tools.provide("list-items", { execute: (_input, ctx) => ({ items: lists.get(ctx.actor.userId) ?? [] }) });',
      "}",
      "",
    ].join("\n"),
  );
  writeFileSync(path.join(caller, "plugin.json"), JSON.stringify({ id: CALLER, version: "1.0.0", permissions: ["tools:call"], uses: [`${PROVIDER}:*`] }));
  return { provider, caller };
}

/** The environment of a reader's shell: no toolpact secrets set. */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("TOOLPACT_") && !name.startsWith("npm_")));

describe("toolpact dev (the real binary)", () => {
  it("serves the folders for a dev tenant, prints keys, a token and each confirmation link, reloads on change, and stops on SIGINT", async () => {
    const root = path.join(work, "project");
    const { provider } = writeProject(root);
    const dev = startCli(["dev", "todo", "assistant", "--port", "0", "--user", "ada"], { cwd: root, env });
    try {
      const ready = await dev.waitFor(/^toolpact dev: serving 2 plugins at (http:\/\/127\.0\.0\.1:\d+)$/m);
      const url = ready[1]!;
      const [, exportedUrl, pluginKey, actorToken] = (await dev.waitFor(/^ {2}export TOOLPACT_URL=(\S+) PLUGIN_KEY=(\S+) ACTOR_TOKEN=(\S+)$/m))!;
      expect(exportedUrl).toBe(url);
      expect(dev.output()).toContain(`to call as ${CALLER} (also written to assistant/.toolpact/dev.env):`);
      const envFile = path.join(root, "assistant/.toolpact/dev.env");
      expect(readFileSync(envFile, "utf8")).toBe(`TOOLPACT_URL=${url}\nPLUGIN_KEY=${pluginKey}\nACTOR_TOKEN=${actorToken}\n`);
      expect(statSync(envFile).mode & 0o077).toBe(0);
      expect(dev.output()).toMatch(new RegExp(`^ {2}${PROVIDER.replace(/\./g, "\\.")} +PLUGIN_KEY=tpk_\\S+$`, "m"));
      expect(existsSync(path.join(provider, "src/generated/index.ts")), "the build ran before the host started").toBe(true);
      const configFile = path.join(root, ".toolpact/dev/toolpact.config.json");
      expect(statSync(configFile).mode & 0o077, "the dev config holds secrets: owner-only").toBe(0);

      // The printed key and token are the caller's: a read runs at once (the dev policy allows reads).
      const caller = { authorization: `Bearer ${pluginKey}`, "x-toolpact-actor": actorToken! };
      const ref = { providerId: PROVIDER, tool: "add-item" };
      expect(await trpc(url, "tools.execute", { ref: { providerId: PROVIDER, tool: "list-items" }, input: {} }, { headers: caller })).toMatchObject({
        status: 200,
        data: { result: { items: [] } },
      });

      // A write waits for the user: platform mode, and dev prints the link to open.
      const before = dev.output().length;
      const preview = await trpc(url, "tools.preview", { ref, input: { text: "Buy milk" } }, { headers: caller });
      const confirmation = (preview.data as { confirmation: { required: boolean; mode: string; requestId: string; confirmUrl: string } }).confirmation;
      expect(confirmation).toMatchObject({ required: true, mode: "platform" });
      expect(confirmation.confirmUrl).toBe(`${url}/confirm/${confirmation.requestId}`);
      const [, signInLink] = (await dev.waitFor(/^confirm com\.example\.todo:add-item for user "ada": open (\S+)$/m, { from: before }))!;
      const signIn = new URL(signInLink!);
      expect(`${signIn.origin}${signIn.pathname}`).toBe(`${url}/confirm/session`);
      expect(signIn.searchParams.get("next")).toBe(`/confirm/${confirmation.requestId}`);
      expect(await trpc(url, "tools.execute", { ref, input: { text: "Buy milk" } }, { headers: caller })).toMatchObject({
        error: { data: { toolpactCode: "CONFIRMATION_REQUIRED" } },
      });

      // The user opens the printed link (it signs them in) and approves on the page.
      expect(await approveOnPage(confirmation.confirmUrl, signIn.searchParams.get("token")!)).toBeLessThan(400);
      const waited = await trpc(url, "confirmations.wait", { requestId: confirmation.requestId }, { headers: caller, query: true });
      const { status, token } = waited.data as { status: string; token: string };
      expect(status).toBe("approved");
      const executed = await trpc(url, "tools.execute", { ref, input: { text: "Buy milk" }, confirmationToken: token }, { headers: caller });
      expect(executed).toMatchObject({ status: 200, data: { operationId: expect.any(String) } });

      // Tokens `toolpact token` mints from the dev secret are verified by the server: presence (sign-in) and actor.
      const presence = await runCli(["token", "--presence", "--user", "ada"], { cwd: root, env });
      expect(presence.stderr).toBe("");
      const signedIn = await fetch(`${url}/confirm/session?token=${presence.stdout.trim()}`, { redirect: "manual" });
      expect(signedIn.status).toBe(200);
      expect(signedIn.headers.get("set-cookie")).toMatch(/HttpOnly/);
      const grace = await runCli(["token", "--user", "grace"], { cwd: root, env });
      const asGrace = { ...caller, "x-toolpact-actor": grace.stdout.trim() };
      expect(await trpc(url, "tools.execute", { ref: { providerId: PROVIDER, tool: "list-items" }, input: {} }, { headers: asGrace })).toMatchObject({
        data: { result: { items: [] } },
      });

      // A manifest change regenerates the clients and restarts the host with the new manifest.
      const beforeChange = dev.output().length;
      writeFileSync(path.join(provider, "plugin.json"), todoManifest("Add an item to the shared list."));
      await dev.waitFor(/^toolpact dev: todo\/plugin\.json changed: regenerating clients, rebuilding and restarting$/m, { from: beforeChange });
      await dev.waitFor(/^toolpact dev: serving 2 plugins at /m, { from: beforeChange });
      expect(readFileSync(path.join(provider, "src/generated/todo.ts"), "utf8")).toContain("Add an item to the shared list.");
      const listed = await trpc(url, "tools.list", undefined, { headers: caller, query: true });
      expect(JSON.stringify(listed.data)).toContain("Add an item to the shared list.");
      // The session's keys and tokens outlive the restart: they are printed once.
      expect(dev.output().slice(beforeChange)).not.toContain("PLUGIN_KEY=");

      // A module change restarts the host on the new code.
      const beforeEdit = dev.output().length;
      const moduleFile = path.join(provider, "index.js");
      writeFileSync(moduleFile, readFileSync(moduleFile, "utf8").replace("`Add ", "`Put "));
      await dev.waitFor(/^toolpact dev: todo\/index\.js changed: restarting$/m, { from: beforeEdit });
      await dev.waitFor(/^toolpact dev: serving 2 plugins at /m, { from: beforeEdit });
      const edited = await trpc(url, "tools.preview", { ref, input: { text: "Tea" } }, { headers: caller });
      expect(edited.data).toMatchObject({ summary: 'Put "Tea"' });
      await dev.waitFor(/^confirm com\.example\.todo:add-item for user "ada": open /m, { from: beforeEdit });
    } finally {
      // As `timeout -s INT` (docs/cli.md) may deliver it: to the process, and again through its process
      // group once the first is being handled. The repeat is the same request, not a second one.
      dev.child.kill("SIGINT");
      await dev.waitFor(/^toolpact dev: SIGINT: stopping$/m);
      dev.child.kill("SIGINT");
    }
    expect(await dev.exited).toEqual({ code: 0, signal: null });
    expect(dev.output()).toMatch(/toolpact dev: SIGINT: stopping\ntoolpact dev: stopped\n$/);
    expect(processesNaming(path.join(root, ".toolpact")), "no dev host outlives toolpact dev").toEqual([]);
    expect(existsSync(path.join(root, ".toolpact/dev")), "the throwaway secrets and database are gone").toBe(false);
    expect(existsSync(path.join(root, "assistant/.toolpact/dev.env"))).toBe(false);
  }, 120_000);

  it("refuses a folder without plugin.json, naming it (in process)", async () => {
    const empty = path.join(work, "empty");
    mkdirSync(empty, { recursive: true });
    const run = await runMain(["dev", "--port", "0"], { cwd: empty, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^toolpact dev: plugin\.json not found: each plugin folder needs its manifest$/m);
  });
});

/** Command lines of live processes that mention `text`. */
function processesNaming(text: string): string[] {
  try {
    return execFileSync("pgrep", ["-af", text], { encoding: "utf8" }).trim().split("\n").filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}
