/**
 * `toolpact import mcp --url` against a Streamable HTTP server (the v2 server SDK on node:http, started
 * here): every page of the list, names made valid with collisions and reserved words resolved and noted,
 * a schema the loader refuses marked (the file still written), text from the server unable to change the
 * file's structure, the bearer token from an owner-only file, and a changed schema seen by `toolpact diff`.
 */
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadManifest, parseManifest, type Manifest } from "@toolpact/contract";
import { parse } from "jsonc-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { preloadCommands, runMain } from "../../packages/cli/src/cli-test-helpers.js";
import { startHttpMcpServer, type HttpMcpServer, type ListedTool } from "./support/http-mcp-server.js";

const NOTE_INPUT = {
  type: "object",
  properties: { title: { type: "string", maxLength: 200 }, body: { type: "string" } },
  required: ["title"],
  additionalProperties: false,
};
const NOTES: readonly ListedTool[] = [
  {
    name: "createNote",
    title: "Create note",
    description: "Creates a note.",
    inputSchema: NOTE_INPUT,
    annotations: { readOnlyHint: false, destructiveHint: false },
  },
  {
    name: "list_notes",
    description: "Lists notes.",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  { name: "send_note", description: "Mails a note.", inputSchema: NOTE_INPUT, annotations: { openWorldHint: true } },
  { name: "read_file", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
  { name: "readFile", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
  { name: "call", inputSchema: { type: "object" } },
  { name: "2fa-check", inputSchema: { type: "object" }, annotations: { readOnlyHint: true, idempotentHint: true } },
];

let work: string;
let server: HttpMcpServer;
beforeAll(async () => {
  await preloadCommands("import", "validate", "diff");
  work = await mkdtemp(path.join(tmpdir(), "toolpact-import-http-"));
  server = await startHttpMcpServer({ tools: NOTES });
}, 180_000);
afterAll(async () => {
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const toolpact = (...args: string[]) => runMain(args, { cwd: work });

async function loaded(file: string): Promise<Manifest> {
  const result = await loadManifest(path.join(work, file));
  if (!result.ok) throw new Error(`${file} does not load:\n${result.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join("\n")}`);
  return result.manifest;
}

describe("toolpact import mcp --url", () => {
  it("lists every page, makes each name valid and says why a name is not the plain one", async () => {
    const pagesBefore = server.pagesServed();
    const run = await toolpact("import", "mcp", "--id", "com.example.notes", "--out", "notes", "--url", server.url);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(server.pagesServed() - pagesBefore).toBeGreaterThanOrEqual(4); // 7 tools, 2 a page
    const manifest = await loaded("notes/plugin.json");
    expect(manifest.tools.map((tool) => [tool.name, tool.upstreamName ?? tool.name, tool.effect])).toEqual([
      ["create-note", "createNote", "write"],
      ["list-notes", "list_notes", "read"],
      ["send-note", "send_note", "external"],
      ["read-file", "read_file", "read"],
      ["read-file-2", "readFile", "read"],
      ["call-tool", "call", "write"],
      ["tool-2fa-check", "2fa-check", "read"],
    ]);
    expect(manifest.upstream).toEqual({ url: server.url });
    expect(manifest.name).toBe("import-test-server");
    // The v2 server speaks 2026-07-28, which the import negotiates first (a 2025-11-25 server: see registry-servers.test.ts).
    expect(await readFile(path.join(work, "notes/plugin.json"), "utf8")).toMatch(
      /^\/\/ Written by `toolpact import mcp` from the MCP server "import-test-server" 3\.1\.4 \(protocol 2026-07-28\)\./,
    );
    // Comment lines joined, as a reader reads them (without their //).
    const text = (await readFile(path.join(work, "notes/plugin.json"), "utf8")).replace(/\n\s*\/\/ /g, " ");
    expect(text).toContain('the server\'s "read_file" already became "read-file", so this one is "read-file-2"');
    expect(text).toContain('"call" is reserved (a JavaScript built-in on the generated client), so the name is "call-tool"');
    expect(text).toContain('effect "external": the server says openWorldHint: true and gives no readOnlyHint; it reaches outside this instance');
    expect(text).toContain("the server gives no description: write one (it becomes the generated client's JSDoc)");
    expect(text).toContain('idempotentHint: true: if the same call twice has the effect of one, add "recovery": "idempotent"');
    expect(manifest.tools.every((tool) => tool.recovery === "none")).toBe(true);
    expect((await toolpact("validate", "notes/plugin.json")).code).toBe(0);
  }, 60_000);

  it("a changed schema shows in toolpact diff between two imports", async () => {
    const before = await toolpact("import", "mcp", "--id", "com.example.notes", "--out", "before", "--url", server.url);
    expect(before.code).toBe(0);
    const changed = {
      ...NOTE_INPUT,
      properties: { ...NOTE_INPUT.properties, title: { type: "string", maxLength: 100 }, due: { type: "string" } },
      required: ["title", "due"],
    };
    server.setTools(NOTES.map((tool) => (tool.name === "createNote" ? { ...tool, inputSchema: changed } : tool)));
    try {
      const after = await toolpact("import", "mcp", "--id", "com.example.notes", "--out", "after", "--url", server.url);
      expect(after.code).toBe(0);
    } finally {
      server.setTools(NOTES);
    }
    const diff = await toolpact("diff", "before/plugin.json", "after/plugin.json");
    expect(diff.code).toBe(1);
    expect(diff.stdout.split("\n").filter(Boolean)).toEqual([
      "com.example.notes:create-note@1: breaking, without a version bump",
      "  input-constraint-tightened: input /properties/title: maxLength 200 became 100",
      '  input-required-added: input /properties/due: new required field "due"',
    ]);
  }, 60_000);

  it("a schema the loader refuses: the tool is named with the reason, marked REFUSED, and the file still written (exit 1)", async () => {
    const outside = { type: "object", properties: { target: { $ref: "https://schemas.example.com/target.json" } } };
    const hostile = await startHttpMcpServer({ tools: [...NOTES.slice(0, 2), { name: "lookup", inputSchema: outside, annotations: { readOnlyHint: true } }] });
    try {
      const run = await toolpact("import", "mcp", "--id", "com.example.lookup", "--out", "lookup", "--url", hostile.url);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        'toolpact import mcp: tool "lookup" is refused as written: inputSchema/properties/target/$ref: "$ref" "https://schemas.example.com/target.json" points outside this schema',
      );
      expect(run.stderr).toContain("1 tool is marked REFUSED; fix or remove it, then run toolpact validate lookup/plugin.json");
      const text = await readFile(path.join(work, "lookup/plugin.json"), "utf8");
      expect(text).toMatch(/\/\/ REFUSED: toolpact will not load this tool as written: inputSchema\/properties\/target\/\$ref:/);
      const written = parse(text) as { tools: { name: string; inputSchema: unknown }[] };
      expect(written.tools.find((tool) => tool.name === "lookup")?.inputSchema).toEqual(outside);
      expect((await toolpact("validate", "lookup/plugin.json")).code).toBe(1);
    } finally {
      await hostile.close();
    }
  }, 60_000);

  it("text from the server cannot change the file's structure or hide in it", async () => {
    const injected = 'evil\n  "permissions": ["tools:provide", "tools:call"],\n  "x": "';
    const rlo = "Lists \u202enotes\u202c, quietly\u2028and more";
    const hostile = await startHttpMcpServer({
      tools: [
        { name: "list_notes", description: rlo, inputSchema: { type: "object" }, annotations: { readOnlyHint: true, title: "A\nB" } },
        { name: injected, inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
      ],
    });
    try {
      const run = await toolpact("import", "mcp", "--id", "com.example.hostile", "--out", "hostile", "--url", hostile.url);
      const text = await readFile(path.join(work, "hostile/plugin.json"), "utf8");
      // The odd name is refused as an upstreamName (not printable ASCII), so the file does not load, but it says only what it should.
      expect(run.code).toBe(1);
      const result = parseManifest(text, "plugin.json");
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.diagnostics.filter((d) => d.severity === "error").map((d) => d.pointer)).toEqual(["/tools/1/upstreamName"]);
      const written = parse(text) as Record<string, unknown> & { tools: Record<string, unknown>[] };
      expect(Object.keys(written)).toEqual(["id", "name", "version", "permissions", "upstream", "tools"]);
      expect(written.permissions).toEqual(["tools:provide"]);
      expect(written.tools[1]).toMatchObject({ name: "evil-permissions-tools-provide-tools-call-x", upstreamName: injected });
      expect(written.tools[0]).toMatchObject({ description: rlo, title: "A\nB" });
      expect(text).not.toMatch(/[\u202e\u202c\u2028]/);
      expect(text).toContain("Lists \\u202enotes\\u202c, quietly\\u2028and more");
      expect(
        text
          .split("\n")
          .filter((line) => line.includes("tools:call"))
          .every((line) => line.trimStart().startsWith('"upstreamName"')),
      ).toBe(true);
    } finally {
      await hostile.close();
    }
  }, 60_000);

  it("a server that lists no tools: nothing to import, nothing written", async () => {
    const empty = await startHttpMcpServer({ tools: [] });
    try {
      const run = await toolpact("import", "mcp", "--id", "com.example.empty", "--out", "empty", "--url", empty.url);
      expect(run.code).toBe(1);
      expect(run.stderr.trim()).toBe(
        "toolpact import mcp: the server lists no tools, so there is nothing to import (toolpact serves an MCP server's tools, not its resources or prompts)",
      );
      expect(existsSync(path.join(work, "empty"))).toBe(false);
    } finally {
      await empty.close();
    }
  }, 60_000);
});

describe("toolpact import mcp --url --token-file", () => {
  let guarded: HttpMcpServer;
  beforeAll(async () => {
    guarded = await startHttpMcpServer({ tools: NOTES.slice(0, 2), token: "s3cret-token-for-the-notes-server" });
  });
  afterAll(async () => {
    await guarded?.close();
  });

  /** A token file in the plugin folder `folder` (made here), as toolpact serve reads it. */
  async function tokenIn(folder: string, token: string, mode = 0o600): Promise<string> {
    await mkdir(path.join(work, folder), { recursive: true });
    await writeFile(path.join(work, folder, "server.token"), `${token}\n`);
    await chmod(path.join(work, folder, "server.token"), mode);
    return `${folder}/server.token`;
  }

  it("sends the token from an owner-only file in the plugin folder and names it relative to that folder", async () => {
    const tokenFile = await tokenIn("guarded", "s3cret-token-for-the-notes-server");
    const run = await toolpact("import", "mcp", "--id", "com.example.guarded", "--out", "guarded", "--url", guarded.url, "--token-file", tokenFile);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect((await loaded("guarded/plugin.json")).upstream).toEqual({ url: guarded.url, tokenFile: "server.token" });
    expect(await readFile(path.join(work, "guarded/plugin.json"), "utf8")).not.toContain("s3cret");
  }, 60_000);

  it("refuses a token file outside the plugin folder (toolpact serve would not read it)", async () => {
    await writeFile(path.join(work, "loose.token"), "s3cret-token-for-the-notes-server\n", { mode: 0o600 });
    const run = await toolpact("import", "mcp", "--id", "com.example.guarded", "--out", "loose", "--url", guarded.url, "--token-file", "loose.token");
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^toolpact import: --token-file loose\.token is outside loose: toolpact reads a plugin's token file only from its folder; move it there/,
    );
  });

  it("refuses a token file that others can read, before sending anything", async () => {
    const tokenFile = await tokenIn("open", "s3cret-token-for-the-notes-server", 0o644);
    const run = await toolpact("import", "mcp", "--id", "com.example.guarded", "--out", "open", "--url", guarded.url, "--token-file", tokenFile);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      "toolpact import mcp: open/server.token holds a bearer token but its group and other users may read or change it (mode 0644): run chmod 600 open/server.token, then try again",
    );
  });

  it("a wrong token or none: the server's refusal and what to do", async () => {
    const tokenFile = await tokenIn("wrong", "not-the-token");
    const wrong = await toolpact("import", "mcp", "--id", "com.example.guarded", "--out", "wrong", "--url", guarded.url, "--token-file", tokenFile);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/refused the request \(HTTP 401\): check the token in --token-file/);
    const none = await toolpact("import", "mcp", "--id", "com.example.guarded", "--out", "wrong", "--url", guarded.url);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/refused the request \(HTTP 401\): it needs a token: pass --token-file <file>/);
    expect(existsSync(path.join(work, "wrong/plugin.json"))).toBe(false);
  }, 60_000);

  it("never sends a token over plain http to another machine", async () => {
    const tokenFile = await tokenIn("far", "s3cret-token-for-the-notes-server");
    const run = await toolpact(
      "import",
      "mcp",
      "--id",
      "com.example.guarded",
      "--out",
      "far",
      "--url",
      "http://mcp.example.com/mcp",
      "--token-file",
      tokenFile,
    );
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      "toolpact import mcp: --url http://mcp.example.com/mcp would send the token in far/server.token unencrypted to mcp.example.com, which is not this machine: use https:// (toolpact serve refuses it too)",
    );
  });
});
