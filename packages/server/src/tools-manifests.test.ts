/**
 * `tools.manifests` and `toolpact codegen --from <url>` against it: a real server on 127.0.0.1:0 with
 * providers and callers registered, reached over HTTP with plugin keys and actor tokens; the real CLI
 * binary generates clients from it, and tsc compiles them (and refuses a call outside the caller's view).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as jose from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatDiagnostic, parseManifest, type Manifest } from "@toolpact/contract";
import { createRuntime, createSqliteStore } from "@toolpact/runtime";
import { createToolpactServer, type ToolpactServer } from "./http-server.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
/** The real binary, built by `pnpm build` (or `npx tsc -b packages/cli`). */
const BIN = path.join(ROOT, "packages/cli/dist/bin.js");
const TSC = path.join(ROOT, "node_modules/typescript/bin/tsc");
const ISSUER = "https://id.example";
const MINUTE = 60_000;

const NOTES = "com.test.notes";
const MAILER = "com.test.mailer";
const HIDDEN = "com.test.hidden";
const ASSISTANT = "com.test.assistant";
const OPEN_CALLER = "com.test.open-caller";

function manifest(source: Record<string, unknown>): Manifest {
  const result = parseManifest(JSON.stringify(source), `${String(source.id)}.plugin.json`);
  if (!result.ok) throw new Error(result.diagnostics.map(formatDiagnostic).join("\n"));
  return result.manifest;
}

const object = (properties: Record<string, unknown>, required: string[]) => ({ type: "object", properties, required, additionalProperties: false });

const MANIFESTS = [
  manifest({
    id: NOTES,
    alias: "notes",
    name: "Notes",
    version: "1.2.0",
    permissions: ["tools:provide", "tools:call", "tools:gate"],
    uses: ["com.test.mailer:*"],
    gates: [{ name: "quiet-hours", appliesTo: ["com.test.notes:*"] }],
    tools: [
      {
        name: "create-note",
        effect: "write",
        title: "Create note",
        inputSchema: object({ title: { type: "string" } }, ["title"]),
        outputSchema: object({ id: { type: "string" } }, ["id"]),
      },
      { name: "list-notes", effect: "read", inputSchema: object({ query: { type: "string" } }, []) },
      { name: "delete-note", effect: "write", inputSchema: object({ id: { type: "string" } }, ["id"]) },
    ],
  }),
  manifest({
    id: MAILER,
    version: "1.0.0",
    permissions: ["tools:provide"],
    tools: [{ name: "send", effect: "external", inputSchema: object({ to: { type: "string" } }, ["to"]) }],
  }),
  manifest({
    id: HIDDEN,
    version: "1.0.0",
    permissions: ["tools:provide"],
    tools: [{ name: "peek", effect: "read", inputSchema: object({}, []) }],
  }),
  // Its uses reaches into every provider; what it gets is narrowed further by installs and enablement.
  manifest({
    id: ASSISTANT,
    version: "1.0.0",
    permissions: ["tools:call"],
    uses: ["com.test.notes:create-note", "com.test.notes:list-notes", "com.test.mailer:*", "com.test.hidden:*"],
  }),
  manifest({ id: OPEN_CALLER, version: "1.0.0", permissions: ["tools:call"] }),
];

const actorSecret = new Uint8Array(randomBytes(32));
const adminKey = randomBytes(32).toString("base64url");
let server: ToolpactServer;
let url: string;
const keys = new Map<string, string>();
let work: string;

async function admin(procedure: string, input: unknown): Promise<unknown> {
  const response = await fetch(`${url}/trpc/admin.${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${adminKey}` },
    body: JSON.stringify(input),
  });
  const body = (await response.json()) as { result?: { data: unknown }; error?: unknown };
  if (!response.ok) throw new Error(`admin.${procedure}: ${JSON.stringify(body.error)}`);
  return body.result?.data;
}

function actorToken(tenant: string): Promise<string> {
  return new jose.SignJWT({ tid: tenant, lvl: 1 })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(ISSUER)
    .setAudience("toolpact")
    .setSubject("user-1")
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(actorSecret);
}

async function manifestsFor(headers: Record<string, string>) {
  const response = await fetch(`${url}/trpc/tools.manifests`, { headers });
  return {
    status: response.status,
    body: (await response.json()) as { result?: { data: Manifest[] }; error?: { message: string; data: Record<string, unknown> } },
  };
}

async function callerHeaders(caller: string, tenant = "t1"): Promise<Record<string, string>> {
  return { authorization: `Bearer ${keys.get(`${tenant}/${caller}`)!}`, "x-toolpact-actor": await actorToken(tenant) };
}

function run(command: string, args: readonly string[], options: { cwd: string; env?: Record<string, string> }) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: { PATH: process.env.PATH ?? "", ...options.env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The real `toolpact` binary in `cwd`, with only PATH and `env` in its environment. */
function toolpact(args: readonly string[], env: Record<string, string> = {}, cwd = work) {
  return run(process.execPath, [BIN, ...args], { cwd, env });
}

/** tsc over `files` in `work` (an ES module project), with @toolpact/client resolved to the built package, under strict options. */
async function compile(files: readonly string[]) {
  await writeFile(path.join(work, "package.json"), JSON.stringify({ type: "module", private: true }));
  await writeFile(
    path.join(work, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "es2023",
        lib: ["es2023"],
        module: "nodenext",
        moduleResolution: "nodenext",
        types: ["node"],
        typeRoots: [path.join(ROOT, "node_modules/@types")],
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        verbatimModuleSyntax: true,
        skipLibCheck: false,
        noEmit: true,
        paths: { "@toolpact/client": [path.join(ROOT, "packages/client/dist/index.d.ts")] },
      },
      files,
    }),
  );
  return run(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: work });
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "toolpact-manifests-"));
  const runtime = await createRuntime({
    store: await createSqliteStore({ path: ":memory:" }),
    signingKeys: [{ kid: "k1", key: new Uint8Array(randomBytes(32)) }],
    storageKey: new Uint8Array(randomBytes(32)),
    actorTokens: { issuer: ISSUER, secret: actorSecret },
  });
  for (const each of MANIFESTS) runtime.registerPlugin(each);
  for (const provider of MANIFESTS.filter((each) => each.tools.length > 0)) {
    for (const tool of provider.tools) runtime.sdkFor(provider.id).tools.provide(tool.name, { execute: () => ({ id: "n1" }) });
  }
  server = createToolpactServer({ runtime, adminKey, port: 0 });
  url = await server.listen();

  const policy = { rules: [{ tools: "com.test.*", decision: "allow" }] };
  // t1: the hidden provider is not installed and the mailer is installed but disabled.
  for (const pluginId of [NOTES, MAILER, ASSISTANT, OPEN_CALLER]) await admin("installPlugin", { tenantId: "t1", pluginId });
  await admin("setPluginEnabled", { tenantId: "t1", pluginId: MAILER, enabled: false });
  // t2: everything is installed and enabled.
  for (const pluginId of [NOTES, MAILER, HIDDEN, ASSISTANT]) await admin("installPlugin", { tenantId: "t2", pluginId });
  for (const tenantId of ["t1", "t2"]) await admin("setPolicy", { tenantId, policy });
  for (const [tenantId, pluginId] of [
    ["t1", ASSISTANT],
    ["t1", OPEN_CALLER],
    ["t2", ASSISTANT],
  ] as const) {
    const issued = (await admin("issuePluginKey", { tenantId, pluginId })) as { key: string };
    keys.set(`${tenantId}/${pluginId}`, issued.key);
  }
}, MINUTE);

afterAll(async () => {
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe("tools.manifests", () => {
  it("gives a caller the manifests of installed, enabled providers within its uses, narrowed to the tools it may call", async () => {
    const { status, body } = await manifestsFor(await callerHeaders(ASSISTANT));
    expect(status).toBe(200);
    expect(body.result?.data).toEqual([
      {
        id: NOTES,
        alias: "notes",
        name: "Notes",
        version: "1.2.0",
        permissions: ["tools:provide"],
        tools: MANIFESTS[0]!.tools.filter((tool) => tool.name !== "delete-note"),
      },
    ]);
  });

  it("shows a provider's own uses, gates or other tools to no caller", async () => {
    const { body } = await manifestsFor(await callerHeaders(OPEN_CALLER));
    const [notes] = body.result!.data;
    expect(body.result!.data.map((each) => each.id)).toEqual([NOTES]);
    expect(notes!.tools.map((tool) => tool.name)).toEqual(["create-note", "list-notes", "delete-note"]);
    expect(notes).not.toHaveProperty("uses");
    expect(notes).not.toHaveProperty("gates");
    expect(notes!.permissions).toEqual(["tools:provide"]);
  });

  it("answers for the key's own tenant: the same caller sees what is installed there", async () => {
    const { body } = await manifestsFor(await callerHeaders(ASSISTANT, "t2"));
    expect(body.result!.data.map((each) => [each.id, each.tools.map((tool) => tool.name)])).toEqual([
      [HIDDEN, ["peek"]],
      [MAILER, ["send"]],
      [NOTES, ["create-note", "list-notes"]],
    ]);
  });

  it("refuses an input it would otherwise ignore, as INPUT_INVALID (tools.list too)", async () => {
    const headers = await callerHeaders(ASSISTANT);
    for (const procedure of ["tools.manifests", "tools.list"]) {
      for (const input of [{}, { tenantId: "t2" }, null, 1]) {
        const response = await fetch(`${url}/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers });
        const body = (await response.json()) as { error?: { message: string; data: Record<string, unknown> } };
        expect(response.status, `${procedure} ${JSON.stringify(input)}`).toBe(400);
        expect(body.error?.data).toMatchObject({ toolpactCode: "INPUT_INVALID", path: procedure });
        expect(body.error?.message).toMatch(/this procedure takes no input: send none/);
      }
    }
  });

  it("refuses a request without a plugin key, with a forged key, or with another tenant's actor token", async () => {
    const headers = await callerHeaders(ASSISTANT);
    const attempts: Record<string, string>[] = [
      {},
      { "x-toolpact-actor": headers["x-toolpact-actor"]! },
      { ...headers, authorization: `Bearer ${randomBytes(32).toString("base64url")}` },
      { ...headers, "x-toolpact-actor": await actorToken("t2") },
    ];
    for (const attempt of attempts) {
      const { status, body } = await manifestsFor(attempt);
      expect(status, JSON.stringify(attempt)).toBe(401);
      expect(body.error?.data.toolpactCode).toBe("UNAUTHENTICATED");
      expect(body.result).toBeUndefined();
    }
  });
});

describe("toolpact codegen --from <url>", () => {
  it(
    "generates the clients a caller may use; they compile, and a call outside its view does not",
    async () => {
      const env = { TOOLPACT_PLUGIN_KEY: keys.get(`t1/${ASSISTANT}`)!, TOOLPACT_ACTOR_TOKEN: await actorToken("t1") };
      const generated = await toolpact(["codegen", "--out", "generated", "--from", url], env);
      expect(generated.stderr).toBe("");
      expect(generated.stdout.trim()).toBe("toolpact codegen: generated: 1 provider, 2 tools; 2 files written, 0 unchanged, 0 removed");
      expect(generated.code).toBe(0);
      expect((await readdir(path.join(work, "generated"))).sort()).toEqual(["index.ts", "notes.ts"]);

      await writeFile(
        path.join(work, "caller.ts"),
        [
          'import type { ToolTransport } from "@toolpact/client";',
          'import { createToolClients } from "./generated/index.js";',
          "declare const transport: ToolTransport;",
          "const tools = createToolClients(transport);",
          "export async function plan(): Promise<string> {",
          '  const preview = await tools.notes.createNote.preview({ title: "Q3 plan" });',
          "  const confirmationToken = await tools.notes.createNote.confirm(preview);",
          '  const { result } = await tools.notes.createNote.execute({ title: "Q3 plan" }, { confirmationToken });',
          '  await tools.notes.listNotes.execute({ query: "plan" });',
          "  return result.id;",
          "}",
          "",
        ].join("\n"),
      );
      const compiled = await compile(["caller.ts"]);
      expect(compiled.stdout + compiled.stderr).toBe("");
      expect(compiled.code).toBe(0);

      await writeFile(
        path.join(work, "outside.ts"),
        [
          'import type { ToolTransport } from "@toolpact/client";',
          'import { createToolClients } from "./generated/index.js";',
          "declare const transport: ToolTransport;",
          'export const deleted = createToolClients(transport).notes.deleteNote.execute({ id: "n1" });',
          "",
        ].join("\n"),
      );
      const refused = await compile(["outside.ts"]);
      expect(refused.stdout).toMatch(/outside\.ts\(4,\d+\): error TS2339: Property 'deleteNote' does not exist on type 'NotesClient'/);
      expect(refused.code).not.toBe(0);

      const check = await toolpact(["codegen", "--out", "generated", "--check", "--from", url], env);
      expect(check.stdout.trim()).toBe("toolpact codegen --check: generated is up to date (2 files)");
      expect(check.code).toBe(0);
    },
    2 * MINUTE,
  );

  it("reads the key and token from files named by flags", async () => {
    const keyFile = path.join(work, "plugin-key");
    const tokenFile = path.join(work, "actor-token");
    // Owner-only, as the CLI requires of a file holding a credential.
    await writeFile(keyFile, `${keys.get(`t1/${OPEN_CALLER}`)!}\n`, { mode: 0o600 });
    await writeFile(tokenFile, await actorToken("t1"), { mode: 0o600 });
    const generated = await toolpact(["codegen", "--out", "open", "--from", url, "--plugin-key-file", keyFile, "--actor-token-file", "actor-token"]);
    expect(generated.stderr).toBe("");
    expect(generated.stdout).toMatch(/: 1 provider, 3 tools; 2 files written/);
    expect(generated.code).toBe(0);
  });

  it("without a key, with a refused key or with a key in argv, says what to do and writes nothing", async () => {
    const missing = await toolpact(["codegen", "--out", "nothing", "--from", url]);
    expect(missing.stderr.trim()).toBe(
      "toolpact codegen: --from needs the calling plugin's plugin key: set TOOLPACT_PLUGIN_KEY, or name a file holding it with --plugin-key-file <file>; nothing was written",
    );
    expect(missing.code).toBe(1);

    const refused = await toolpact(["codegen", "--out", "nothing", "--from", url], {
      TOOLPACT_PLUGIN_KEY: "not-a-key",
      TOOLPACT_ACTOR_TOKEN: await actorToken("t1"),
    });
    expect(refused.stderr).toMatch(/^toolpact codegen: http:\/\/127\.0\.0\.1:\d+ refused tools\.manifests: UNAUTHENTICATED: .+; nothing was written\n$/);
    expect(refused.code).toBe(1);

    const inArgv = await toolpact(["codegen", "--out", "nothing", "--from", url, "--plugin-key", "secret"]);
    expect(inArgv.stderr).toMatch(/^toolpact codegen: Unknown option '--plugin-key'/);
    expect(inArgv.code).toBe(2);
    expect(await readdir(work)).not.toContain("nothing");
  });

  it("says so when nothing answers at the URL", async () => {
    // A port that was free a moment ago: nothing listens there now.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const gone = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const result = await toolpact(["codegen", "--out", "nothing", "--from", gone], { TOOLPACT_PLUGIN_KEY: "k", TOOLPACT_ACTOR_TOKEN: "t" });
    expect(result.stderr).toMatch(
      /^toolpact codegen: cannot reach http:\/\/127\.0\.0\.1:\d+ \(.+\): is toolpact serve running there\?; nothing was written\n$/,
    );
    expect(result.code).toBe(1);
  });
});
