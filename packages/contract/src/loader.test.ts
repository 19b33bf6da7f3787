import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isToolpactError } from "@toolpact/protocol";
import { formatDiagnostic, loadManifest, loadManifestOrThrow, parseManifest, type ManifestLoadResult } from "./loader.js";
import type { Manifest } from "./manifest.js";
import { compileSchema } from "./validation.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));

/** Parses a fixture under its short name, so diagnostics read "invalid/x.plugin.json:3:5: ...". */
function fixture(name: string): ManifestLoadResult {
  return parseManifest(readFileSync(join(FIXTURES, name), "utf8"), name);
}

function lines(result: ManifestLoadResult): string[] {
  return (result.ok ? result.warnings : result.diagnostics).map(formatDiagnostic);
}

function valid(name: string): Manifest {
  const result = fixture(name);
  if (!result.ok) throw new Error(`expected ${name} to load:\n${lines(result).join("\n")}`);
  return result.manifest;
}

function check(text: string): ManifestLoadResult {
  return parseManifest(text, "plugin.json");
}

const HEADER = '"id": "com.example.test", "version": "1.0.0"';

/** "line:column" (1-based) of the `occurrence`-th `needle` in `text`: where a diagnostic must point. */
function at(text: string, needle: string, occurrence = 1): string {
  let offset = -1;
  for (let found = 0; found < occurrence; found++) {
    offset = text.indexOf(needle, offset + 1);
    if (offset < 0) throw new Error(`${needle} not found`);
  }
  const before = text.slice(0, offset).split("\n");
  return `${before.length}:${before[before.length - 1]!.length + 1}`;
}

describe("valid manifests", () => {
  it("a single read tool, with defaults applied", () => {
    const manifest = valid("read-only.plugin.json");
    expect(manifest.tools).toEqual([
      {
        name: "current-conditions",
        version: 1,
        effect: "read",
        requiresConfirmation: false,
        minVerificationLevel: 0,
        recovery: "none",
        timeoutMs: 10_000,
        inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
    ]);
    expect(manifest.gates).toEqual([]);
    expect(fixture("read-only.plugin.json")).toMatchObject({ ok: true, warnings: [] });
  });

  it("a write tool with confirmation and a minimum verification level, next to a read tool", () => {
    const manifest = valid("notes.plugin.json");
    expect(manifest.id).toBe("com.example.notes");
    expect(manifest.alias).toBe("notes");
    expect(manifest.tools.map((tool) => [tool.name, tool.effect, tool.requiresConfirmation, tool.minVerificationLevel, tool.recovery])).toEqual([
      ["create-record", "write", true, 1, "idempotent"],
      ["search-records", "read", false, 0, "none"],
    ]);
  });

  it("write and external tools need confirmation by default", () => {
    const result = check(`{ ${HEADER}, "permissions": ["tools:provide"], "tools": [
      { "name": "a", "effect": "write", "inputSchema": { "type": "object" } },
      { "name": "b", "effect": "external", "inputSchema": { "type": "object" } },
      { "name": "c", "effect": "write", "requiresConfirmation": false, "inputSchema": { "type": "object" } }
    ] }`);
    expect(result.ok && result.manifest.tools.map((tool) => tool.requiresConfirmation)).toEqual([true, true, false]);
  });

  it("the RFC's own JSONC example, with comments and trailing commas", () => {
    const manifest = valid("rfc-0047.plugin.json");
    expect(manifest.tools[0]).toMatchObject({
      name: "create-record",
      effect: "write",
      requiresConfirmation: true,
      inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
    });
  });

  it("a caller with uses, hooks and guards, and an external provider with a draft-07 schema and a gate", () => {
    expect(valid("assistant.plugin.json").hooks).toEqual([{ name: "notify-owner", point: "afterTool", appliesTo: ["*"] }]);
    const mailer = valid("mailer.plugin.json");
    expect(mailer.gates).toHaveLength(1);
    expect(compileSchema(mailer.tools[0]!.inputSchema).validate({ to: "nobody", subject: "s", body: "b" })).toEqual([
      { path: "/to", message: 'must match format "email"' },
    ]);
  });

  it("returns a deep-frozen manifest", () => {
    const manifest = valid("notes.plugin.json");
    expect(Object.isFrozen(manifest)).toBe(true);
    expect(Object.isFrozen(manifest.tools[0]!.inputSchema)).toBe(true);
    expect(Object.isFrozen((manifest.tools[0]!.inputSchema as { properties: object }).properties)).toBe(true);
  });

  it("warns, without failing, about keywords codegen cannot express", () => {
    const result = fixture("schema-warnings.plugin.json");
    expect(result.ok).toBe(true);
    expect(lines(result)).toMatchInlineSnapshot(`
      [
        "schema-warnings.plugin.json:16:44: warning: "prefixItems" is validated, but codegen cannot express it as a TypeScript type: the generated type is wider than the schema",
        "schema-warnings.plugin.json:17:41: warning: "patternProperties" is validated, but codegen cannot express it as a TypeScript type: the generated type is wider than the schema",
        "schema-warnings.plugin.json:20:9: warning: "if" is validated, but codegen cannot express it as a TypeScript type: the generated type is wider than the schema",
      ]
    `);
  });

  it("accepts a byte-order mark and CRLF line ends, and counts lines right", () => {
    const text = `\uFEFF{\r\n  ${HEADER},\r\n  "permissions": [],\r\n  "colour": 1\r\n}\r\n`;
    expect(lines(check(text))).toEqual([
      'plugin.json:4:3: error: unknown key "colour" in the manifest; allowed keys: $schema, id, alias, name, description, version, permissions, uses, tools, gates, hooks, guards, upstream, isolation, process',
    ]);
  });
});

describe("invalid manifests: one rule each, at the offending key or value", () => {
  it("tools: [] is refused", () => {
    expect(lines(fixture("invalid/empty-tools.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/empty-tools.plugin.json:5:12: error: tools must not be empty: add an entry or remove "tools"",
      ]
    `);
  });

  it("a duplicate (name, version) is reported at the second tool's name", () => {
    expect(lines(fixture("invalid/duplicate-tool.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/duplicate-tool.plugin.json:8:15: error: duplicate tool "create-record" version 1: tools[0] on line 6 already declares it; rename this one or give it another "version"",
      ]
    `);
  });

  it("Not_Valid, trailing-hyphen and double-hyphen names are refused", () => {
    expect(lines(fixture("invalid/bad-names.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/bad-names.plugin.json:6:15: error: tools[0].name "Not_Valid": a tool name is lowercase words joined by single hyphens, e.g. "create-record"",
        "invalid/bad-names.plugin.json:7:15: error: tools[1].name "trailing-": a tool name is lowercase words joined by single hyphens, e.g. "create-record"",
        "invalid/bad-names.plugin.json:8:15: error: tools[2].name "double--hyphen": a tool name is lowercase words joined by single hyphens, e.g. "create-record"",
      ]
    `);
  });

  it("reserved names are refused at the name", () => {
    expect(lines(fixture("invalid/reserved-name.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/reserved-name.plugin.json:6:15: error: tools[0].name "then": this tool name collides with a JavaScript built-in on the generated client object; choose another name",
        "invalid/reserved-name.plugin.json:7:15: error: tools[1].name "to-string": this tool name collides with a JavaScript built-in on the generated client object; choose another name",
      ]
    `);
  });

  it("a plugin whose client name would be a built-in is refused", () => {
    expect(lines(fixture("invalid/reserved-client-name.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/reserved-client-name.plugin.json:2:9: error: the client name derived from this id, "then", collides with a JavaScript built-in on the generated client object; set "alias" to another name",
      ]
    `);
    const text = `{ ${HEADER}, "alias": "constructor", "permissions": [] }`;
    expect(lines(check(text))).toEqual([
      `plugin.json:${at(text, '"constructor"')}: error: alias "constructor" collides with a JavaScript built-in on the generated client object; choose another alias`,
    ]);
  });

  it("effect delete is refused at the value", () => {
    expect(lines(fixture("invalid/bad-effect.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/bad-effect.plugin.json:6:42: error: tools[0].effect must be one of "read", "write", "external"; got "delete"",
      ]
    `);
  });

  it("a missing inputSchema is reported at the tool", () => {
    expect(lines(fixture("invalid/missing-input-schema.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/missing-input-schema.plugin.json:6:5: error: tools[0] is missing required key "inputSchema" (an object)",
      ]
    `);
  });

  it("minVerificationLevel 9 is refused at the value", () => {
    expect(lines(fixture("invalid/verification-level.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/verification-level.plugin.json:9:31: error: tools[0].minVerificationLevel must be at most 3; got 9",
      ]
    `);
  });

  it("an unknown key is reported at that key with a hint", () => {
    expect(lines(fixture("invalid/unknown-key.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/unknown-key.plugin.json:9:7: error: unknown key "requireConfirmation" in tools[0]; did you mean "requiresConfirmation"?",
      ]
    `);
  });

  it("tools without tools:provide are refused at the tools key", () => {
    expect(lines(fixture("invalid/missing-permission.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/missing-permission.plugin.json:5:3: error: declaring tools needs the "tools:provide" permission: add "tools:provide" to "permissions"",
      ]
    `);
  });

  it("uses, gates, hooks and guards each need their permission", () => {
    expect(lines(fixture("invalid/missing-capability-permissions.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/missing-capability-permissions.plugin.json:5:3: error: "uses" (calling other plugins' tools) needs the "tools:call" permission: add "tools:call" to "permissions"",
        "invalid/missing-capability-permissions.plugin.json:6:3: error: declaring gates needs the "tools:gate" permission: add "tools:gate" to "permissions"",
        "invalid/missing-capability-permissions.plugin.json:7:3: error: declaring hooks needs the "tools:observe" permission: add "tools:observe" to "permissions"",
        "invalid/missing-capability-permissions.plugin.json:8:3: error: declaring guards needs the "tools:guard" permission: add "tools:guard" to "permissions"",
      ]
    `);
  });

  it('a schema typo ("type": "strnig") is reported at its line, naming keyword and value', () => {
    expect(lines(fixture("invalid/schema-type-typo.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/schema-type-typo.plugin.json:12:30: error: "strnig" is not a JSON Schema type; did you mean "string"?",
      ]
    `);
  });

  it("an external $ref is reported at the $ref value", () => {
    expect(lines(fixture("invalid/external-ref.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/external-ref.plugin.json:12:32: error: "$ref" "https://example.com/schemas/address.json" points outside this schema: a tool schema resolves "$ref" only inside itself (no files, no network); copy the definition into "$defs" and use "#/$defs/<name>"",
      ]
    `);
  });

  it("a duplicate key is reported at its later occurrence", () => {
    expect(lines(fixture("invalid/duplicate-key.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/duplicate-key.plugin.json:9:7: error: duplicate key "effect" in tools[0]: it is already set on line 8; remove one",
        "invalid/duplicate-key.plugin.json:13:3: error: duplicate key "version" in the manifest: it is already set on line 3; remove one",
      ]
    `);
  });

  it("a syntax error is reported with its position", () => {
    expect(lines(fixture("invalid/syntax-error.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/syntax-error.plugin.json:4:3: error: syntax error: expected ',' between entries",
      ]
    `);
  });

  it("a cut-off manifest is one error at its end, naming what to close (the parser reports every missing bracket)", () => {
    const full = readFileSync(join(FIXTURES, "notes.plugin.json"), "utf8");
    const cutAt = (needle: string) => full.slice(0, full.indexOf(needle) + needle.length);
    expect(lines(check(cutAt('"body": { "type": "string" }')))).toMatchInlineSnapshot(`
      [
        "plugin.json:23:39: error: syntax error: unexpected end of file: the JSON is cut off; add "}}}]}" to close the open objects and array",
      ]
    `);
    expect(lines(check(`${cutAt('"body": { "type": "str')}\n`))).toMatchInlineSnapshot(`
      [
        "plugin.json:24:1: error: syntax error: unexpected end of file: the JSON is cut off inside a string; finish the last entry and add "}}}}]}" to close the open objects and array",
      ]
    `);
    expect(lines(check(cutAt('"properties": ')))).toMatchInlineSnapshot(`
      [
        "plugin.json:21:23: error: syntax error: unexpected end of file: the JSON is cut off; finish the last entry and add "}}]}" to close the open objects and array",
      ]
    `);
    expect(lines(check('{ "id": "com.example.test", "version": "1.0.0", "tools": [{ "name": tru'))).toMatchInlineSnapshot(`
      [
        "plugin.json:1:72: error: syntax error: unexpected end of file: the JSON is cut off; finish the last entry and add "}]}" to close the open objects and array",
      ]
    `);
    // Errors before the end stay, one per position; the end no longer claims the file was cut off.
    expect(lines(check('{ "id": "com.example.test" "version": "1.0.0", "tools": [{ "name": "x"'))).toMatchInlineSnapshot(`
      [
        "plugin.json:1:28: error: syntax error: expected ',' between entries",
        "plugin.json:1:71: error: syntax error: unexpected end of file; add "}]}" to close the open objects and array",
      ]
    `);
  });

  it("schema rules: root object, $id, local $ref, RE2 patterns, meta-schema, tsType, keyword typos, $schema", () => {
    expect(lines(fixture("invalid/schema-rules.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/schema-rules.plugin.json:9:32: error: tools[0].inputSchema must be an object schema: its root "type" must be "object"; got "string"",
        "invalid/schema-rules.plugin.json:14:7: error: tools[1].inputSchema must be an object schema: add "type": "object"",
        "invalid/schema-rules.plugin.json:20:9: error: "$id" is not allowed in a tool schema: it is one self-contained document; remove "$id" and refer to parts with "$ref": "#/$defs/<name>"",
        "invalid/schema-rules.plugin.json:23:29: error: "$ref" "#/$defs/tiemstamp" does not resolve inside this schema; did you mean "#/$defs/timestamp"?",
        "invalid/schema-rules.plugin.json:24:50: error: pattern "^(?=[A-Z])[A-Z0-9]+$" cannot be used ((?=...) at offset 1): lookahead needs a backtracking engine; patterns run on a linear-time engine, which has no lookaround: write the pattern without it, or check this in the provider",
        "invalid/schema-rules.plugin.json:25:51: error: "minimum" must be a number; got the string "1"",
        "invalid/schema-rules.plugin.json:26:20: error: "tsType" is not allowed: it would paste code into generated clients; describe the type with JSON Schema keywords",
        "invalid/schema-rules.plugin.json:27:38: error: unknown keyword "itmes"; did you mean "items"? As written it is ignored and checks nothing",
        "invalid/schema-rules.plugin.json:31:36: error: unsupported "$schema" "http://json-schema.org/draft-04/schema#": use "https://json-schema.org/draft/2020-12/schema" (the default) or "http://json-schema.org/draft-07/schema#"",
      ]
    `);
  });

  it("several problems in one file are all reported, in file order, cross-field rules included", () => {
    expect(lines(fixture("invalid/many-problems.plugin.json"))).toMatchInlineSnapshot(`
      [
        "invalid/many-problems.plugin.json:5:3: error: unknown key "permisions" in the manifest; did you mean "permissions"?",
        "invalid/many-problems.plugin.json:6:3: error: declaring tools needs the "tools:provide" permission: add "tools:provide" to "permissions"",
        "invalid/many-problems.plugin.json:8:15: error: tools[0].name "Not_Valid": a tool name is lowercase words joined by single hyphens, e.g. "create-record"",
        "invalid/many-problems.plugin.json:9:17: error: tools[0].effect must be one of "read", "write", "external"; got "delete"",
        "invalid/many-problems.plugin.json:10:31: error: tools[0].minVerificationLevel must be at most 3; got 9",
        "invalid/many-problems.plugin.json:11:77: error: "strnig" is not a JSON Schema type; did you mean "string"?",
        "invalid/many-problems.plugin.json:14:15: error: tools[1].name "then": this tool name collides with a JavaScript built-in on the generated client object; choose another name",
        "invalid/many-problems.plugin.json:18:46: error: "$ref" "https://example.com/address.json" points outside this schema: a tool schema resolves "$ref" only inside itself (no files, no network); copy the definition into "$defs" and use "#/$defs/<name>"",
        "invalid/many-problems.plugin.json:21:5: error: tools[2] is missing required key "inputSchema" (an object)",
        "invalid/many-problems.plugin.json:26:15: error: duplicate tool "fetch-page" version 1: tools[2] on line 22 already declares it; rename this one or give it another "version"",
        "invalid/many-problems.plugin.json:32:3: error: "uses" (calling other plugins' tools) needs the "tools:call" permission: add "tools:call" to "permissions"",
      ]
    `);
  });
});

describe("loader details", () => {
  it("reports an empty file, and a root that is not an object", () => {
    expect(lines(check("  // nothing here\n"))).toEqual([
      'plugin.json:1:1: error: the manifest is empty: it must be a JSON object with "id", "version" and "permissions"',
    ]);
    expect(lines(check("[1]"))).toEqual(["plugin.json:1:1: error: the manifest must be a JSON object; got an array"]);
  });

  it("reports missing top-level keys at the root object", () => {
    expect(lines(check("{}"))).toEqual([
      'plugin.json:1:1: error: the manifest is missing required key "id" (a string)',
      'plugin.json:1:1: error: the manifest is missing required key "version" (a string)',
    ]);
  });

  it("runs cross-field rules even when the tools fail field-level checks", () => {
    const text = `{ ${HEADER}, "tools": [
      { "name": "x", "effect": "nope", "inputSchema": { "type": "object" } },
      { "name": "x", "effect": "read" }
    ] }`;
    expect(lines(check(text))).toEqual([
      `plugin.json:${at(text, '"tools"')}: error: declaring tools needs the "tools:provide" permission: add "tools:provide" to "permissions"`,
      `plugin.json:${at(text, '"nope"')}: error: tools[0].effect must be one of "read", "write", "external"; got "nope"`,
      `plugin.json:${at(text, '{ "name": "x", "effect": "read"')}: error: tools[1] is missing required key "inputSchema" (an object)`,
      `plugin.json:${at(text, '"x"', 2)}: error: duplicate tool "x" version 1: tools[0] on line 2 already declares it; rename this one or give it another "version"`,
    ]);
  });

  it("resolves local $ref by JSON Pointer and by $anchor, and refuses $id even when nested", () => {
    const ok = check(`{ ${HEADER}, "permissions": ["tools:provide"], "tools": [{ "name": "t", "effect": "read", "inputSchema": {
      "type": "object",
      "properties": { "a": { "$ref": "#/$defs/a%20b" }, "b": { "$ref": "#pos" }, "c": { "$ref": "#/properties/a" }, "d": { "$ref": "#" } },
      "$defs": { "a b": { "type": "string" }, "p": { "$anchor": "pos", "type": "integer", "minimum": 1 } }
    } }] }`);
    expect(ok.ok).toBe(true);
    const text = `{ ${HEADER}, "permissions": ["tools:provide"], "tools": [{ "name": "t", "effect": "read", "inputSchema": {
      "type": "object", "properties": { "a": { "$id": "x", "$ref": "#nowhere" } }
    } }] }`;
    expect(lines(check(text))).toEqual([
      `plugin.json:${at(text, '"$id"')}: error: "$id" is not allowed in a tool schema: it is one self-contained document; remove "$id" and refer to parts with "$ref": "#/$defs/<name>"`,
      `plugin.json:${at(text, '"#nowhere"')}: error: "$ref" "#nowhere" names no "$anchor" in this schema`,
    ]);
  });

  it("refuses a $ref cycle that consumes no data, at the $ref that closes it", () => {
    const text = `{ ${HEADER}, "permissions": ["tools:provide"], "tools": [{ "name": "t", "effect": "read", "inputSchema": {
      "type": "object", "properties": { "a": { "$ref": "#/$defs/x" } },
      "$defs": { "x": { "allOf": [{ "$ref": "#/$defs/x" }] }, "y": { "not": { "$ref": "#/$defs/z" } }, "z": { "anyOf": [{ "$ref": "#/$defs/y" }] } }
    } }] }`;
    expect(lines(check(text)).filter((line) => line.includes(": error: "))).toEqual([
      `plugin.json:${at(text, '"#/$defs/x"', 2)}: error: "$ref" leads back to /$defs/x without consuming any data: evaluating it would never end; a recursive schema must descend into a property or an item before it refers to itself again`,
      `plugin.json:${at(text, '"#/$defs/y"')}: error: "$ref" leads back to /$defs/y without consuming any data: evaluating it would never end; a recursive schema must descend into a property or an item before it refers to itself again`,
    ]);
  });

  it("keeps recursive schemas that consume data (trees) valid", () => {
    const result = check(`{ ${HEADER}, "permissions": ["tools:provide"], "tools": [{ "name": "t", "effect": "read", "inputSchema": {
      "type": "object", "properties": { "root": { "$ref": "#/$defs/node" } },
      "$defs": { "node": { "type": "object", "properties": { "children": { "type": "array", "items": { "$ref": "#/$defs/node" } } } } }
    } }] }`);
    expect(lines(result)).toEqual([]);
    expect(result.ok).toBe(true);
  });

  it("refuses patterns outside ECMA-262 or beyond the linear-time engine at the pattern, naming the construct", () => {
    const text = `{ ${HEADER}, "permissions": ["tools:provide"], "tools": [{ "name": "t", "effect": "read", "inputSchema": {
      "type": "object", "properties": { "a": { "type": "string", "pattern": "(?i)^a$" }, "b": { "type": "string", "pattern": "^(\\\\w)\\\\1$" } },
      "patternProperties": { "^x(?!y)": true }
    } }] }`;
    expect(lines(check(text)).filter((line) => line.includes(": error: "))).toEqual([
      `plugin.json:${at(text, '"(?i)^a$"')}: error: pattern "(?i)^a$" cannot be used: it is not a valid ECMA-262 regular expression: Invalid regular expression: /(?i)^a$/u: Invalid group`,
      `plugin.json:${at(text, '"^(\\\\w)')}: error: pattern "^(\\\\w)\\\\1$" cannot be used (\\1 at offset 5): a backreference matches text captured earlier, which no linear-time engine can do: check this in the provider`,
      `plugin.json:${at(text, '"^x(?!y)"')}: error: pattern "^x(?!y)" cannot be used ((?!...) at offset 2): negative lookahead needs a backtracking engine; patterns run on a linear-time engine, which has no lookaround: write the pattern without it, or check this in the provider`,
    ]);
  });

  it("accepts draft-07 schemas with definitions", () => {
    const result = check(`{ ${HEADER}, "permissions": ["tools:provide"], "tools": [{ "name": "t", "effect": "read", "inputSchema": {
      "$schema": "http://json-schema.org/draft-07/schema",
      "type": "object",
      "properties": { "a": { "$ref": "#/definitions/a" } },
      "definitions": { "a": { "type": ["string", "null"] } }
    } }] }`);
    expect(lines(result)).toEqual([]);
    expect(result.ok).toBe(true);
  });

  it("points diagnostics into the manifest with JSON Pointers", () => {
    const result = fixture("invalid/schema-type-typo.plugin.json");
    expect(!result.ok && result.diagnostics[0]?.pointer).toBe("/tools/0/inputSchema/properties/title/type");
  });

  it("offers a did-you-mean for enum values", () => {
    const text = `{ ${HEADER}, "permissions": ["tools:provide"], "tools": [{ "name": "t", "effect": "writ", "inputSchema": { "type": "object" } }] }`;
    expect(lines(check(text))).toEqual([
      `plugin.json:${at(text, '"writ"')}: error: tools[0].effect must be one of "read", "write", "external"; got "writ"; did you mean "write"?`,
    ]);
  });

  it("keeps a __proto__ key in the manifest as data and reports it as unknown", () => {
    const text = `{ ${HEADER}, "permissions": [], "__proto__": { "polluted": true } }`;
    expect(lines(check(text))).toEqual([
      `plugin.json:${at(text, '"__proto__"')}: error: unknown key "__proto__" in the manifest; allowed keys: $schema, id, alias, name, description, version, permissions, uses, tools, gates, hooks, guards, upstream, isolation, process`,
    ]);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it("refuses numbers that overflow to Infinity", () => {
    const text = `{ ${HEADER}, "permissions": ["tools:provide"], "tools": [{ "name": "t", "effect": "read", "timeoutMs": 1e400, "inputSchema": { "type": "object" } }] }`;
    expect(lines(check(text))).toEqual([`plugin.json:${at(text, "1e400")}: error: tools[0].timeoutMs: the number 1e400 is out of range`]);
  });
});

describe("loadManifest and friends", () => {
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "toolpact-contract-"));
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it("loads a file by path", async () => {
    const result = await loadManifest(join(FIXTURES, "notes.plugin.json"));
    expect(result.ok).toBe(true);
  });

  it("reports an unreadable file as one diagnostic at 1:1", async () => {
    const missing = join(directory, "missing.plugin.json");
    expect(await loadManifest(missing)).toEqual({
      ok: false,
      diagnostics: [{ file: missing, line: 1, column: 1, severity: "error", message: "cannot read the manifest: no such file", pointer: "" }],
    });
    const result = await loadManifest(directory);
    expect(!result.ok && result.diagnostics[0]?.message).toMatch(/^cannot read the manifest: EISDIR/);
  });

  it("formats a diagnostic as file:line:col: severity: message", () => {
    expect(formatDiagnostic({ file: "a/plugin.json", line: 3, column: 7, severity: "warning", message: "careful", pointer: "/x" })).toBe(
      "a/plugin.json:3:7: warning: careful",
    );
  });

  it("loadManifestOrThrow returns the manifest or throws MANIFEST_INVALID listing every diagnostic", async () => {
    await expect(loadManifestOrThrow(join(FIXTURES, "read-only.plugin.json"))).resolves.toMatchObject({ id: "com.example.weather" });
    const file = join(directory, "bad.plugin.json");
    await writeFile(file, `{ "id": "Bad", "version": "1", "permissions": [] }`);
    const error = await loadManifestOrThrow(file).catch((thrown: unknown) => thrown);
    expect(isToolpactError(error)).toBe(true);
    expect((error as { code: string }).code).toBe("MANIFEST_INVALID");
    expect((error as Error).message.replaceAll(file, "<file>")).toMatchInlineSnapshot(`
      "manifest <file> is invalid (2 errors); fix these and load it again:
      <file>:1:9: error: id "Bad": a plugin id is lowercase dot-separated segments, e.g. "com.example.notes"
      <file>:1:27: error: version "1": version is semver, e.g. "1.4.0""
    `);
  });
});

describe("schemas keep exactly what was checked", () => {
  it("keeps a __proto__ keyword in a tool schema as data: it neither vanishes nor becomes a prototype", () => {
    const text = `{ ${HEADER}, "permissions": ["tools:provide"], "tools": [{ "name": "t", "effect": "read", "inputSchema": {
      "type": "object", "__proto__": { "required": ["x"] }
    } }] }`;
    const result = check(text);
    expect(lines(result)).toEqual([
      `plugin.json:${at(text, '"__proto__"')}: warning: unknown keyword "__proto__" is ignored by validation and codegen (prefix extensions with "x-" to silence this)`,
    ]);
    if (!result.ok) throw new Error("expected ok");
    const schema = result.manifest.tools[0]!.inputSchema;
    expect(Object.getPrototypeOf(schema)).toBe(Object.prototype);
    expect(Object.keys(schema)).toEqual(["type", "__proto__"]);
    expect((schema as { required?: unknown }).required).toBeUndefined();
    expect(compileSchema(schema).validate({})).toEqual([]);
  });
});

describe("unknown schema keywords", () => {
  const text = `{ ${HEADER}, "permissions": ["tools:provide"], "tools": [{ "name": "t", "effect": "read", "inputSchema": {
      "type": "object", "requird": ["a"], "example": {}, "nullable": true, "x-ui": 1,
      "properties": { "a": { "type": "string", "format": "emial" }, "b": { "format": "toString" } }
    } }] }`;

  it("refuses a misspelt constraint, warns about a misspelt annotation or an unknown keyword or format", () => {
    expect(lines(check(text))).toEqual([
      `plugin.json:${at(text, '"requird"')}: error: unknown keyword "requird"; did you mean "required"? As written it is ignored and checks nothing`,
      `plugin.json:${at(text, '"example"')}: warning: unknown keyword "example" is ignored; did you mean "examples"?`,
      `plugin.json:${at(text, '"nullable"')}: warning: unknown keyword "nullable" is ignored by validation and codegen (prefix extensions with "x-" to silence this)`,
      `plugin.json:${at(text, '"emial"')}: warning: format "emial" is not known, so it is not checked; did you mean "email"?`,
      `plugin.json:${at(text, '"toString"')}: warning: format "toString" is not known, so it is not checked`,
    ]);
  });
});

describe("meta-schema messages name the keyword and the bad value", () => {
  function schemaLines(schema: string, $schema = ""): string[] {
    const text = `{ ${HEADER}, "permissions": ["tools:provide"], "tools": [{ "name": "t", "effect": "read", "inputSchema": {
      ${$schema}"type": "object", ${schema}
    } }] }`;
    return lines(check(text)).map((line) => line.replace(/^plugin\.json:\d+:\d+: /, ""));
  }

  it.each([
    ['"required": "title"', 'error: "required" must be an array; got the string "title"'],
    ['"minLength": -1', 'error: "minLength" must be >= 0; got -1'],
    ['"properties": { "a": { "maxItems": 1.5 } }', 'error: "maxItems" must be an integer; got the number 1.5'],
    ['"additionalProperties": "no"', 'error: "additionalProperties" must be an object or true or false; got the string "no"'],
    ['"properties": { "a": { "type": ["string", "strnig"] } }', 'error: "strnig" is not a JSON Schema type; did you mean "string"?'],
    ['"properties": { "a": { "type": "String" } }', 'error: "String" is not a JSON Schema type; did you mean "string"?'],
    [
      '"properties": { "a": { "type": "text" } }',
      'error: "text" is not a JSON Schema type; use one of "array", "boolean", "integer", "null", "number", "object", "string"',
    ],
  ])("2020-12: %s", (schema, expected) => {
    expect(schemaLines(schema)).toEqual([expected]);
  });

  it("draft-07 documents are checked against the draft-07 meta-schema", () => {
    const draft07 = '"$schema": "http://json-schema.org/draft-07/schema#", ';
    expect(schemaLines('"minLength": -1', draft07)).toEqual(['error: "minLength" must be >= 0; got -1']);
    // Tuple `items` is draft-07; 2020-12 wants a schema there.
    expect(schemaLines('"properties": { "a": { "items": [{ "type": "string" }] } }', draft07)).toEqual([]);
    expect(schemaLines('"properties": { "a": { "items": [{ "type": "string" }] } }')).toEqual([
      'error: "items" must be an object or true or false; got an array',
    ]);
  });
});
