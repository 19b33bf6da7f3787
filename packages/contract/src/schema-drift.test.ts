import { describe, expect, it } from "vitest";
import type { ToolDeclaration } from "./manifest.js";
import { compareUpstreamTools, describeToolDrift } from "./schema-drift.js";

const base = { version: 1, effect: "read", requiresConfirmation: false, minVerificationLevel: 0, recovery: "none", timeoutMs: 10_000 } as const;
const readFile: ToolDeclaration = {
  ...base,
  name: "read-file",
  upstreamName: "read_file",
  inputSchema: { type: "object", properties: { path: { type: "string" }, "a/b~c": { type: "string" } }, required: ["path"] },
};

describe("compareUpstreamTools", () => {
  it("finds no drift when the schemas are equal as canonical JSON (key order aside), and lists undeclared tools", () => {
    const live = [
      { name: "read_file", inputSchema: { required: ["path"], properties: { "a/b~c": { type: "string" }, path: { type: "string" } }, type: "object" } },
      { name: "delete_everything", inputSchema: { type: "object" } },
    ];
    expect(compareUpstreamTools([readFile], live)).toEqual({ drifted: [], undeclared: ["delete_everything"] });
  });

  it("names the JSON Pointers added, removed and changed, escaped, and a tool the server no longer lists", () => {
    const live = [
      { name: "read_file", inputSchema: { type: "object", properties: { path: { type: "number" }, head: { type: "integer" } }, required: ["path", "head"] } },
    ];
    const { drifted } = compareUpstreamTools([readFile, { ...readFile, name: "stat", upstreamName: undefined as never }], live);
    expect(drifted).toEqual([
      {
        tool: "read-file@1",
        upstreamName: "read_file",
        kind: "changed",
        changes: [{ schema: "inputSchema", added: ["/properties/head", "/required/1"], removed: ["/properties/a~1b~0c"], changed: ["/properties/path/type"] }],
      },
      { tool: "stat@1", upstreamName: "stat", kind: "missing" },
    ]);
    expect(drifted.map(describeToolDrift)).toEqual([
      'read-file@1 (upstream "read_file"): inputSchema added /properties/head, /required/1; removed /properties/a~1b~0c; changed at /properties/path/type',
      'stat@1 (upstream "stat"): the server lists no such tool',
    ]);
  });

  it("compares an output schema only when the manifest declares one", () => {
    const withOutput = { ...readFile, outputSchema: { type: "object" } };
    const live = { name: "read_file", inputSchema: readFile.inputSchema };
    expect(compareUpstreamTools([readFile], [{ ...live, outputSchema: { type: "object" } }]).drifted).toEqual([]);
    expect(compareUpstreamTools([withOutput], [live]).drifted.map(describeToolDrift)).toEqual([
      'read-file@1 (upstream "read_file"): outputSchema removed (the whole schema)',
    ]);
  });
});
