import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PluginSdk } from "../plugin-sdk.js";
import { createRuntime, type ToolpactRuntime } from "../runtime.js";
import { createSqliteStore } from "../store/sqlite/sqlite-store.js";
import { loadPluginFolders, PluginLoadError, readPluginFolder, runActivate } from "./plugin-folder.js";

let dir: string;
let runtime: ToolpactRuntime;

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-plugin-folder-"));
  runtime = await createRuntime({
    store: await createSqliteStore({ path: ":memory:" }),
    signingKeys: [{ kid: "k1", key: new Uint8Array(randomBytes(32)) }],
    storageKey: new Uint8Array(randomBytes(32)),
    actorTokens: { issuer: "https://id.example", secret: new Uint8Array(randomBytes(32)) },
  });
});

afterEach(async () => {
  await runtime.close();
  rmSync(dir, { recursive: true, force: true });
});

function folder(name: string, files: Record<string, unknown>): string {
  const at = path.join(dir, name);
  mkdirSync(at, { recursive: true });
  for (const [file, content] of Object.entries(files)) writeFileSync(path.join(at, file), typeof content === "string" ? content : JSON.stringify(content));
  return at;
}

const provider = {
  id: "com.example.echo",
  version: "1.0.0",
  permissions: ["tools:provide"],
  tools: [{ name: "echo", effect: "read", inputSchema: { type: "object" } }],
};
const caller = { id: "com.example.chat-ui", version: "1.0.0", permissions: ["tools:call"], uses: ["com.example.echo:echo"] };

describe("loadPluginFolders", () => {
  it("registers every folder, then activates the ones with a module; a caller needs only plugin.json", async () => {
    const echo = folder("echo", {
      "plugin.json": provider,
      "index.js": 'export function activate(sdk) { sdk.tools.provide("echo", { execute: (input) => input }); }\n',
    });
    const chat = folder("chat-ui", { "plugin.json": caller });
    const manifests = await loadPluginFolders(runtime, [echo, chat]);
    expect(manifests.map((manifest) => manifest.id)).toEqual(["com.example.echo", "com.example.chat-ui"]);
    expect([...runtime.manifests.keys()]).toEqual(["com.example.echo", "com.example.chat-ui"]);
    expect((await readPluginFolder(chat)) as { moduleFile: unknown }).toMatchObject({ moduleFile: undefined });
    // Installable and keyed like any plugin.
    await runtime.admin.installPlugin("acme", "com.example.chat-ui");
    expect((await runtime.admin.issuePluginKey("acme", "com.example.chat-ui")).key).toMatch(/./);
  });

  it("lists every folder's problem and loads none", async () => {
    const bare = folder("bare", { "plugin.json": provider });
    const missing = path.join(dir, "nowhere");
    const twice = folder("twice", { "plugin.json": caller });
    const again = folder("again", { "plugin.json": caller });
    const refused = await loadPluginFolders(runtime, [bare, missing, twice, again]).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PluginLoadError);
    const message = (refused as Error).message;
    expect(message).toContain('no plugin module for "com.example.echo", which declares tools');
    expect(message).toContain(`${path.join(missing, "plugin.json")}: not found`);
    expect(message).toContain('plugin id "com.example.chat-ui" is already loaded from');
    expect(runtime.manifests.size).toBe(0);
  });

  it("refuses a plugin that asks for isolation, and runs none of its code in this process", async () => {
    const isolated = folder("isolated", {
      "plugin.json": { ...provider, isolation: "process" },
      "index.js": 'import { writeFileSync } from "node:fs";\nwriteFileSync(new URL("./imported", import.meta.url), "yes");\nexport function activate() {}\n',
    });
    const refused = await loadPluginFolders(runtime, [isolated]).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PluginLoadError);
    expect((refused as Error).message).toContain(
      'plugin "com.example.echo" asks for "isolation": "process", which the toolpact host (toolpact serve, or startHost from @toolpact/server) provides',
    );
    expect(existsSync(path.join(isolated, "imported"))).toBe(false);
    expect(runtime.manifests.size).toBe(0);
  });

  it("names the plugin whose activate failed", async () => {
    const broken = folder("broken", { "plugin.json": provider, "index.js": 'export function activate() { throw new Error("no database"); }\n' });
    await expect(loadPluginFolders(runtime, [broken])).rejects.toThrow('plugin "com.example.echo": activate(sdk) failed: no database');
  });
});

describe("runActivate", () => {
  /** runActivate hands the sdk to activate untouched; these activates never look at it. */
  const sdk = {} as PluginSdk;

  it("gives up on an activate that never settles, naming the plugin and what to do", async () => {
    const never = () => new Promise<void>(() => {});
    const failure = await runActivate(provider.id, never, sdk, 50).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PluginLoadError);
    expect((failure as Error).message).toBe(
      'plugin "com.example.echo": activate(sdk) did not settle within 0.05 s: provide the tools and return; start long work (connections, warm-up) without awaiting it in activate',
    );
  });

  it("names the plugin when activate throws synchronously or rejects, and waits for one that settles in time", async () => {
    const thrown = () => {
      throw new Error("no database");
    };
    await expect(runActivate(provider.id, thrown, sdk, 1_000)).rejects.toThrow('plugin "com.example.echo": activate(sdk) failed: no database');
    await expect(runActivate(provider.id, () => Promise.reject(new Error("late")), sdk, 1_000)).rejects.toThrow("activate(sdk) failed: late");
    let provided = false;
    await runActivate(
      provider.id,
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 10));
        provided = true;
      },
      sdk,
      1_000,
    );
    expect(provided).toBe(true);
  });
});
