/**
 * `toolpact import mcp` against MCP servers from the registry that no one here wrote (server-filesystem,
 * server-memory, server-everything, started from node_modules over stdio): the written plugin.json keeps
 * their schemas exactly, infers effects from their hints with a note on each, loads with `validate`, and
 * gives a typed client that tsc accepts. Commands run in process (main(argv, io)); one case runs the
 * built binary, as users do.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { loadManifest, type Manifest } from "@toolpact/contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { preloadCommands, runCli, runMain } from "../../packages/cli/src/cli-test-helpers.js";
import { ROOT, serverBin, serverCommand } from "./support/registry-servers.js";
import { typecheck } from "./support/typecheck.js";

let work: string;
let data: string;
beforeAll(async () => {
  await preloadCommands("import", "validate", "codegen");
  work = await mkdtemp(path.join(tmpdir(), "toolpact-import-"));
  data = path.join(work, "data");
  await mkdir(data);
  await writeFile(path.join(data, "hello.txt"), "hello\n");
}, 180_000);
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

const toolpact = (...args: string[]) => runMain(args, { cwd: work });

async function loaded(file: string): Promise<Manifest> {
  const result = await loadManifest(file);
  if (!result.ok) throw new Error(`${file} does not load:\n${result.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join("\n")}`);
  return result.manifest;
}

/** The tool declared as `name`. */
function tool(manifest: Manifest, name: string) {
  const found = manifest.tools.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no tool ${name} in ${manifest.tools.map((t) => t.name).join(", ")}`);
  return found;
}

/** The comment lines right above `"effect"` in the block of the tool named `name`. */
function effectNotes(text: string, name: string): string {
  const start = text.indexOf(`"name": "${name}"`);
  const effect = text.indexOf('"effect"', start);
  const lines = text.slice(start, effect).split("\n");
  const notes: string[] = [];
  for (let index = lines.length - 1; index >= 0; index--) {
    const line = lines[index]!.trim();
    if (line === "") continue;
    if (!line.startsWith("//")) break;
    notes.unshift(line.replace(/^\/\/ ?/, ""));
  }
  return notes.join(" ");
}

/** The tools a v2 MCP client lists from the same server, by name. */
async function listedDirectly(command: string[]): Promise<Map<string, { inputSchema: unknown; outputSchema?: unknown }>> {
  const [program, ...args] = command.slice(1);
  const client = new Client({ name: "direct", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: program!, args, stderr: "pipe" }));
  try {
    const { tools } = await client.listTools();
    return new Map(tools.map((listed) => [listed.name, listed]));
  } finally {
    await client.close();
  }
}

describe("toolpact import mcp: server-filesystem", () => {
  let manifest: Manifest;
  let text: string;
  beforeAll(async () => {
    const run = await toolpact("import", "mcp", "--id", "com.example.files", "--out", "files", ...serverCommand("server-filesystem", data));
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("toolpact import mcp: wrote files/plugin.json: com.example.files@0.1.0, 14 tools (10 read, 4 write)");
    text = await readFile(path.join(work, "files/plugin.json"), "utf8");
    manifest = await loaded(path.join(work, "files/plugin.json"));
  }, 60_000);

  it("names each tool in toolpact's form and keeps the server's name as upstreamName", () => {
    expect(tool(manifest, "read-text-file")).toMatchObject({ upstreamName: "read_text_file", title: "Read Text File" });
    expect(tool(manifest, "write-file").upstreamName).toBe("write_file");
    // It runs in the plugin folder, as when served: no "cwd", which could only point there.
    expect(manifest.upstream).toEqual({ command: process.execPath, args: [serverBin("server-filesystem"), data] });
    expect(manifest.permissions).toEqual(["tools:provide"]);
  });

  it("infers read only from readOnlyHint: true, write otherwise, and never sets recovery", () => {
    for (const name of ["read-text-file", "list-directory", "get-file-info", "search-files"]) expect(tool(manifest, name).effect, name).toBe("read");
    for (const name of ["write-file", "edit-file", "move-file", "create-directory"]) expect(tool(manifest, name).effect, name).toBe("write");
    expect(manifest.tools.filter((declared) => declared.effect === "write").every((declared) => declared.requiresConfirmation)).toBe(true);
    expect(manifest.tools.every((declared) => declared.recovery === "none")).toBe(true);
  });

  it("marks each inference with a note saying what it came from and what to check", () => {
    expect(effectNotes(text, "read-text-file")).toBe(
      'effect "read": the server says readOnlyHint: true; check that it changes nothing (a read runs without confirmation), else set "write"',
    );
    const write = effectNotes(text, "write-file");
    expect(write).toContain('effect "write": the server says readOnlyHint: false; it is confirmed before each call');
    expect(write).toContain("destructiveHint: true: it may delete or overwrite data; keep it confirmed");
    expect(write).toContain('idempotentHint: true: if the same call twice has the effect of one, add "recovery": "idempotent"');
    expect(text).toMatch(/^\/\/ Written by `toolpact import mcp` from the MCP server "secure-filesystem-server" [\d.]+ \(protocol\s+(\/\/ )?2025-11-25\)\./);
  });

  it("carries every input and output schema over exactly as the server lists it", async () => {
    const direct = await listedDirectly(serverCommand("server-filesystem", data));
    expect(direct.size).toBe(manifest.tools.length);
    for (const declared of manifest.tools) {
      const listed = direct.get(declared.upstreamName ?? declared.name);
      expect(declared.inputSchema, declared.name).toEqual(listed?.inputSchema);
      expect(declared.outputSchema, declared.name).toEqual(listed?.outputSchema);
    }
  });

  it("loads with toolpact validate", async () => {
    const run = await toolpact("validate", "files/plugin.json");
    expect(run.stdout.trim()).toBe("ok files/plugin.json: com.example.files@0.1.0, 14 tools (10 read, 4 write)");
    expect(run.code).toBe(0);
  });

  it("gives a typed client that tsc accepts, and refuses a call with the wrong input", async () => {
    // Inside the repository, so that the generated code finds @toolpact/client as a caller's project does.
    const project = await mkdtemp(path.join(ROOT, "test/upstream-import/.typed-caller-"));
    try {
      const run = await runMain(["codegen", "--out", path.join(project, "generated"), path.join(work, "files/plugin.json")], { cwd: work });
      expect(run.code).toBe(0);
      const caller = path.join(project, "caller.ts");
      await writeFile(
        caller,
        [
          'import type { ToolTransport } from "@toolpact/client";',
          'import { createToolClients } from "./generated/index.js";',
          "declare const transport: ToolTransport;",
          "const tools = createToolClients(transport);",
          "export async function readThenWrite(): Promise<string> {",
          '  const { result } = await tools.files.readTextFile.execute({ path: "/notes/plan.txt", head: 3 });',
          '  const preview = await tools.files.writeFile.preview({ path: "/notes/plan.txt", content: result.content });',
          "  const confirmationToken = await tools.files.writeFile.confirm(preview);",
          '  if (confirmationToken === undefined) throw new Error("write-file is confirmed: its preview gives a token");',
          '  await tools.files.writeFile.execute({ path: "/notes/plan.txt", content: "v2" }, { confirmationToken });',
          "  // @ts-expect-error path is required",
          "  await tools.files.readTextFile.execute({ head: 3 });",
          "  // @ts-expect-error content is a string",
          '  await tools.files.writeFile.preview({ path: "/notes/plan.txt", content: 42 });',
          "  return result.content;",
          "}",
        ].join("\n"),
      );
      // Each @ts-expect-error above is an error tsc must find: one it does not find is an error of its own.
      expect(typecheck(project)).toEqual([]);
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  }, 240_000);

  it("refuses to replace plugin.json without --force, and replaces it with --force", async () => {
    const again = await toolpact("import", "mcp", "--id", "com.example.files", "--out", "files", ...serverCommand("server-filesystem", data));
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe(
      "toolpact import mcp: files/plugin.json exists: pass --force to replace it, or import into another folder and compare the two with toolpact diff",
    );
    const forced = await toolpact(
      "import",
      "mcp",
      "--id",
      "com.example.files",
      "--version",
      "0.2.0",
      "--out",
      "files",
      "--force",
      ...serverCommand("server-filesystem", data),
    );
    expect(forced.code).toBe(0);
    expect((await loaded(path.join(work, "files/plugin.json"))).version).toBe("0.2.0");
  }, 60_000);
});

describe("toolpact import mcp: server-memory and server-everything", () => {
  it("server-memory: its graph reads are read, its changes write with their notes, and it validates", async () => {
    const run = await runMain(["import", "mcp", "--id", "com.example.memory", "--out", "memory", ...serverCommand("server-memory")], {
      cwd: work,
      env: { ...process.env, MEMORY_FILE_PATH: path.join(work, "memory.jsonl") },
    });
    expect(run.code).toBe(0);
    const manifest = await loaded(path.join(work, "memory/plugin.json"));
    for (const name of ["read-graph", "search-nodes", "open-nodes"]) expect(tool(manifest, name).effect, name).toBe("read");
    for (const name of ["create-entities", "delete-entities", "add-observations"]) expect(tool(manifest, name).effect, name).toBe("write");
    const text = await readFile(path.join(work, "memory/plugin.json"), "utf8");
    expect(effectNotes(text, "delete-entities")).toContain("destructiveHint: true");
    expect((await toolpact("validate", "memory/plugin.json")).code).toBe(0);
  }, 60_000);

  it("server-everything: valid names stay as they are, openWorldHint: true makes external, and it validates", async () => {
    const run = await toolpact("import", "mcp", "--id", "com.example.everything", "--out", "everything", ...serverCommand("server-everything"));
    expect(run.code).toBe(0);
    const manifest = await loaded(path.join(work, "everything/plugin.json"));
    expect(tool(manifest, "get-tiny-image").upstreamName).toBeUndefined();
    expect(tool(manifest, "gzip-file-as-resource").effect).toBe("external");
    const text = await readFile(path.join(work, "everything/plugin.json"), "utf8");
    expect(effectNotes(text, "gzip-file-as-resource")).toMatch(/^effect "external": the server says openWorldHint: true/);
    expect((await toolpact("validate", "everything/plugin.json")).code).toBe(0);
  }, 60_000);
});

describe("toolpact import mcp: errors for people", () => {
  it("a server that will not start: its stderr's tail, exit 1, nothing written", async () => {
    const run = await toolpact(
      "import",
      "mcp",
      "--id",
      "com.example.broken",
      "--out",
      "broken",
      "--",
      process.execPath,
      "-e",
      "console.error('starting'); console.error('cannot read /etc/broken/config.json: no such file'); process.exit(3)",
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("toolpact import mcp: the server (");
    expect(run.stderr).toContain("would not start or answer");
    expect(run.stderr).toContain("its stderr ended with:\n    starting\n    cannot read /etc/broken/config.json: no such file");
    expect(existsSync(path.join(work, "broken"))).toBe(false);
  }, 60_000);

  it("a server that never answers: stopped after --timeout, with what to do", async () => {
    const started = Date.now();
    const run = await toolpact(
      "import",
      "mcp",
      "--id",
      "com.example.silent",
      "--out",
      "silent",
      "--timeout",
      "1",
      "--",
      process.execPath,
      "-e",
      "setInterval(() => {}, 1000)",
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/did not list its tools within 1 s: check that it speaks MCP on stdio, or give it longer with --timeout/);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(existsSync(path.join(work, "silent"))).toBe(false);
  }, 30_000);

  it("a command that does not exist", async () => {
    const run = await toolpact("import", "mcp", "--id", "com.example.missing", "--out", "missing", "--", "no-such-mcp-server-here");
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^toolpact import mcp: could not start "no-such-mcp-server-here": no such program/);
  }, 60_000);

  it("usage errors: a bad id, no server, both a command and --url, a bad or secret --pass-env", async () => {
    const badId = await toolpact("import", "mcp", "--id", "Com.Example", "--out", "x", ...serverCommand("server-memory"));
    expect(badId.code).toBe(2);
    expect(badId.stderr).toMatch(/^toolpact import: --id "Com\.Example" is not a plugin id: lowercase dot-separated segments/);
    const none = await toolpact("import", "mcp", "--id", "com.example.x", "--out", "x");
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^toolpact import: name the server: its command after --, or --url <url>/);
    const both = await toolpact("import", "mcp", "--id", "com.example.x", "--out", "x", "--url", "http://127.0.0.1:1/mcp", "--", "node");
    expect(both.code).toBe(2);
    const badName = await toolpact("import", "mcp", "--id", "com.example.x", "--out", "x", "--pass-env", "API-BASE", ...serverCommand("server-memory"));
    expect(badName.code).toBe(2);
    expect(badName.stderr).toMatch(/^toolpact import: --pass-env "API-BASE": an environment variable name is letters, digits and underscores/);
    const secret = await toolpact(
      "import",
      "mcp",
      "--id",
      "com.example.x",
      "--out",
      "x",
      "--pass-env",
      "TOOLPACT_ADMIN_KEY",
      ...serverCommand("server-memory"),
    );
    expect(secret.code).toBe(2);
    expect(secret.stderr).toMatch(/^toolpact import: --pass-env TOOLPACT_ADMIN_KEY: toolpact's own variables are never passed to a plugin/);
    expect(existsSync(path.join(work, "x"))).toBe(false);
  });

  it("a server that needs a variable: refused without it; --pass-env passes it now and names it in passEnv, never its value", async () => {
    const guarded = [
      "--",
      process.execPath,
      "--input-type=module",
      "-e",
      `if (process.env.MEMORY_IMPORT_SECRET === undefined) { console.error("MEMORY_IMPORT_SECRET is not set"); process.exit(2); } await import(${JSON.stringify(pathToFileURL(serverBin("server-memory")).href)});`,
    ];
    const env = { ...process.env, MEMORY_IMPORT_SECRET: "value-that-stays-out-of-the-file", MEMORY_FILE_PATH: path.join(work, "guarded.jsonl") };
    const without = await runMain(["import", "mcp", "--id", "com.example.guarded", "--out", "guarded", ...guarded], { cwd: work, env });
    expect(without.code).toBe(1);
    expect(without.stderr).toContain("its stderr ended with:\n    MEMORY_IMPORT_SECRET is not set");
    const passed = await runMain(["import", "mcp", "--id", "com.example.guarded", "--out", "guarded", "--pass-env", "MEMORY_IMPORT_SECRET", ...guarded], {
      cwd: work,
      env,
    });
    expect(passed.code).toBe(0);
    expect((await loaded(path.join(work, "guarded/plugin.json"))).upstream).toMatchObject({ passEnv: ["MEMORY_IMPORT_SECRET"] });
    expect(await readFile(path.join(work, "guarded/plugin.json"), "utf8")).not.toContain("value-that-stays-out-of-the-file");
  }, 60_000);

  it("the built binary imports server-memory as users run it", async () => {
    const run = await runCli(["import", "mcp", "--id", "com.example.memory", "--out", "memory-bin", ...serverCommand("server-memory")], {
      cwd: work,
      env: { ...process.env, MEMORY_FILE_PATH: path.join(work, "memory-bin.jsonl") },
    });
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(
      /\n?toolpact import mcp: wrote memory-bin\/plugin\.json: com\.example\.memory@0\.1\.0, 9 tools \(6 write, 3 read\); review each/,
    );
    expect(run.code).toBe(0);
  }, 60_000);
});
