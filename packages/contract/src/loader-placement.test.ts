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
