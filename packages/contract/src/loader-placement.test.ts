// Where a provider's tools run: an upstream MCP server (stdio or Streamable HTTP) or an isolated child.
import { describe, expect, it } from "vitest";
import { formatDiagnostic, parseManifest } from "./index.js";

const TOOL = '"tools": [{ "name": "read-file", "effect": "read", "inputSchema": { "type": "object" } }]';

function check(body: string): string[] {
  const result = parseManifest(`{ "id": "mcp.files", "version": "1.0.0", "permissions": ["tools:provide"], ${body} }`, "plugin.json");
  return result.ok ? [] : result.diagnostics.map(formatDiagnostic);
}

describe("upstream", () => {
  it("accepts a stdio command with its environment and a Streamable HTTP URL with a token file", () => {
    expect(
      check(`"upstream": { "command": "npx", "args": ["-y", "server"], "cwd": "work", "env": { "A": "1" }, "passEnv": ["HOME"], "maxInFlight": 4 }, ${TOOL}`),
    ).toEqual([]);
    expect(check(`"upstream": { "url": "https://mcp.example.com/mcp", "tokenFile": "token" }, ${TOOL}`)).toEqual([]);
    const result = parseManifest(`{ "id": "mcp.files", "version": "1.0.0", "permissions": ["tools:provide"], "upstream": { "command": "srv" }, ${TOOL} }`, "p");
    expect(result.ok && result.manifest.upstream).toEqual({ command: "srv" });
  });

  it("refuses an upstream with no tools, with seams, with isolation, or with both a command and a URL", () => {
    expect(check(`"upstream": { "command": "srv" }`)).toEqual([
      `plugin.json:1:76: error: an upstream MCP server provides this plugin's "tools": declare them (toolpact import mcp writes them from the server)`,
    ]);
    expect(check(`"upstream": { "command": "srv", "url": "https://x.example/mcp" }, ${TOOL}`)).toContain(
      'plugin.json:1:76: error: upstream has both "command" and "url": keep one (a stdio server or a Streamable HTTP URL)',
    );
    expect(check(`"upstream": { "command": "srv" }, "isolation": "process", ${TOOL}`)).toContain(
      'plugin.json:1:123: error: an upstream MCP server already runs in a process of its own: remove "isolation"',
    );
    expect(check(`"upstream": { "command": "srv" }, "guards": [{ "name": "g", "appliesTo": ["*"] }], ${TOOL}`).join("\n")).toMatch(
      /a plugin with "upstream" provides tools only: move its guards to a plugin with a module/,
    );
  });

  it("names an unknown key, a bad environment name and a non-HTTP URL", () => {
    expect(check(`"upstream": { "command": "srv", "evn": {} }, ${TOOL}`).join("\n")).toMatch(/unknown key "evn" in upstream; did you mean "env"/);
    expect(check(`"upstream": { "command": "srv", "env": { "NOT-OK": "1" } }, ${TOOL}`).join("\n")).toMatch(/environment variable name/);
    expect(check(`"upstream": { "url": "file:///etc/passwd" }, ${TOOL}`)).not.toEqual([]);
  });
});

describe("isolation", () => {
  it('takes "process" with its limits, and refuses "process" settings without it', () => {
    expect(check(`"isolation": "process", "process": { "memoryMb": 64, "passEnv": ["HOME"] }, ${TOOL}`)).toEqual([]);
    expect(check(`"process": { "memoryMb": 64 }, ${TOOL}`)).toEqual([
      'plugin.json:1:76: error: "process" sets up an isolated child: add "isolation": "process", or remove "process"',
    ]);
    expect(check(`"isolation": "vm", ${TOOL}`).join("\n")).toMatch(/isolation must be one of "in-process", "process"/);
    expect(check(`"isolation": "process", "process": { "memoryMb": 1 }, ${TOOL}`).join("\n")).toMatch(/memoryMb must be at least 16/);
  });
});

describe("upstreamName", () => {
  const named = (name: string) =>
    `"tools": [{ "name": "read-file", "upstreamName": ${JSON.stringify(name)}, "effect": "read", "inputSchema": { "type": "object" } }]`;

  it("names the tool on the upstream server, and is kept as written", () => {
    expect(check(`"upstream": { "command": "srv" }, ${named("read_file")}`)).toEqual([]);
    const result = parseManifest(
      `{ "id": "mcp.files", "version": "1.0.0", "permissions": ["tools:provide"], "upstream": { "command": "srv" }, ${named("Files.read_file")} }`,
      "p",
    );
    expect(result.ok && result.manifest.tools[0]?.upstreamName).toBe("Files.read_file");
  });

  it("is refused without an upstream, and when empty, too long or holding spaces or control characters", () => {
    expect(check(named("read_file"))).toEqual([
      'plugin.json:1:109: error: "upstreamName" names a tool on an upstream MCP server: add "upstream", or remove it',
    ]);
    for (const bad of ["", "read file", "read\u0007file", "x".repeat(129), "lé"]) {
      expect(check(`"upstream": { "command": "srv" }, ${named(bad)}`).join("\n")).toMatch(/an upstream tool name is 1 to 128 printable ASCII characters/);
    }
  });
});
