import { ts } from "ts-morph";
import { describe, expect, it } from "vitest";
import { manifestOf, oneTool } from "./fixtures.test-support.js";
import { generateClients } from "./generate.js";
import { indentDeclarations } from "./reindent.js";
import { compileSchemaTypes } from "./schema-types.js";

const where = "com.example.probe:probe@1 inputSchema";
const providerFile = async (inputSchema: Record<string, unknown>) =>
  (await generateClients([oneTool(inputSchema)])).find((file) => file.path === "probe.ts")!.contents;

describe("compileSchemaTypes", () => {
  it("closes objects that name their properties and keeps open the ones that do not", async () => {
    const { code, declared } = await compileSchemaTypes(
      {
        type: "object",
        properties: {
          named: { type: "object", properties: { a: { type: "string" } } },
          bare: { type: "object" },
          open: { type: "object", properties: { a: { type: "string" } }, additionalProperties: true },
        },
      },
      "ProbeInput",
      where,
    );
    expect(declared).toEqual(["ProbeInput"]);
    expect(code).toMatchInlineSnapshot(`
      "export interface ProbeInput {
        named?: {
          a?: string;
        };
        bare?: {
          [k: string]: unknown | undefined;
        };
        open?: {
          a?: string;
          [k: string]: unknown | undefined;
        };
      }"
    `);
  });

  it("names every part after its root with an underscore, so no two tools' parts collide", async () => {
    const { declared } = await compileSchemaTypes(
      {
        type: "object",
        properties: { a: { $ref: "#/$defs/address" }, b: { title: "Point", type: "object", properties: { x: { type: "number" } } } },
        $defs: { address: { type: "string" } },
      },
      "ProbeInput",
      where,
    );
    expect([...declared].sort()).toEqual(["ProbeInput", "ProbeInput_Address", "ProbeInput_Point"]);
  });

  it("turns $anchor references into pointers and 2020-12 tuples into arrays of unknown", async () => {
    const { code } = await compileSchemaTypes(
      {
        type: "object",
        properties: { a: { $ref: "#tag" }, t: { type: "array", prefixItems: [{ type: "string" }], items: false } },
        $defs: { tag: { $anchor: "tag", type: "string" } },
      },
      "ProbeInput",
      where,
    );
    expect(code).toContain("a?: ProbeInput_Tag");
    expect(code).toContain("t?: unknown[]");
  });

  it("refuses keywords that paste code into the output, wherever a schema is", async () => {
    await expect(compileSchemaTypes({ type: "object", properties: { a: { tsType: "string; export const pwn = 1" } } }, "ProbeInput", where)).rejects.toThrow(
      'com.example.probe:probe@1 inputSchema at "/properties/a": "tsType" is not allowed: it would paste code into the generated client; remove it',
    );
    await expect(compileSchemaTypes({ type: "object", $defs: { e: { enum: ["a"], tsEnumNames: ["A"] } } }, "ProbeInput", where)).rejects.toThrow(
      /"tsEnumNames" is not allowed/,
    );
    // A property may be *named* tsType: that is data, not the keyword.
    await expect(compileSchemaTypes({ type: "object", properties: { tsType: { type: "string" } } }, "ProbeInput", where)).resolves.toMatchObject({
      declared: ["ProbeInput"],
    });
  });

  it("refuses a $ref that leads outside the document or into data it would read as a schema", async () => {
    for (const ref of ["other.json#/x", "https://example.com/s.json", "#/x-lib/evil", "#/properties/a/const", "#/$defs/missing"]) {
      await expect(
        compileSchemaTypes(
          { type: "object", properties: { a: { const: { tsType: "never; export const pwn = 1" } }, b: { $ref: ref } }, "x-lib": { evil: { tsType: "any" } } },
          "ProbeInput",
          where,
        ),
        ref,
      ).rejects.toThrow(`"$ref" ${JSON.stringify(ref)} does not point at a schema inside this schema document`);
    }
  });

  it("drops what it cannot express, so the type is wider than the schema, never narrower", async () => {
    const { code } = await compileSchemaTypes(
      {
        type: "object",
        properties: {
          n: { not: { type: "string" } },
          c: { type: "object", properties: { m: { type: "string" } }, if: { required: ["m"] }, then: { required: ["x"] } },
        },
      },
      "ProbeInput",
      where,
    );
    expect(code).toContain("n?: unknown");
    expect(code).not.toMatch(/\bx\b/);
  });
});

/** Top-level declaration names of a file, after checking it parses without a syntax error. */
function topLevelNames(text: string): string[] {
  const { diagnostics } = ts.transpileModule(text, { reportDiagnostics: true, compilerOptions: { target: ts.ScriptTarget.ES2022 } });
  expect(diagnostics?.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))).toEqual([]);
  const file = ts.createSourceFile("probe.ts", text, ts.ScriptTarget.Latest);
  return file.statements.flatMap((statement) => {
    if (ts.isVariableStatement(statement)) return statement.declarationList.declarations.map((d) => d.name.getText(file));
    const name = (statement as { name?: ts.Node }).name;
    return name ? [name.getText(file)] : [];
  });
}

describe("text from manifests cannot become code", () => {
  const attack = "*/ export const pwn = 1; /*";

  it("in schema descriptions, titles, enum values and property names", async () => {
    const text = await providerFile({
      type: "object",
      description: attack,
      properties: { [attack]: { type: "string", description: attack, title: attack }, e: { enum: [attack, '"quoted"'] } },
    });
    // The title names a type, made a safe identifier; nothing else is declared.
    expect(topLevelNames(text)).toEqual([
      "ProbeInput_ExportConstPwn1",
      "ProbeInput",
      "probeDescriptor",
      "ProbeMethods",
      "ProbeClient",
      "createProbeClient",
      "ProbeProviderHandlers",
      "defineProbeProvider",
    ]);
  });

  it("in tool titles and descriptions", async () => {
    const manifest = oneTool({ type: "object" });
    const tampered = { ...manifest, tools: [{ ...manifest.tools[0]!, title: attack, description: `line\r\n${attack}` }] };
    const text = (await generateClients([tampered])).find((file) => file.path === "probe.ts")!.contents;
    expect(text).not.toContain("\r");
    expect(topLevelNames(text)).toEqual([
      "ProbeInput",
      "probeDescriptor",
      "ProbeMethods",
      "ProbeClient",
      "createProbeClient",
      "ProbeProviderHandlers",
      "defineProbeProvider",
    ]);
  });

  it("in tool names that spell the stand-ins of the printed <Tool>Methods template", async () => {
    const names = ["toolpact-template-output", "toolpact-template-input", "toolpact-template-methods"];
    const manifest = manifestOf({
      id: "com.example.probe",
      version: "1.0.0",
      permissions: ["tools:provide"],
      tools: names.map((name) => ({ name, effect: "write", inputSchema: { type: "object" }, outputSchema: { type: "object" } })),
    });
    const text = (await generateClients([manifest])).find((file) => file.path === "probe.ts")!.contents;
    for (const type of ["ToolpactTemplateOutput", "ToolpactTemplateInput", "ToolpactTemplateMethods"]) {
      const methods = new RegExp(`export interface ${type}Methods \\{[\\s\\S]*?\\n\\}`).exec(text)?.[0];
      expect(methods, type).toContain(`preview(input: ${type}Input, options?: toolpact.PreviewOptions)`);
      expect(methods, type).toContain(`Promise<toolpact.ExecuteResult<${type}Output>>`);
    }
  });
});

describe("indentDeclarations", () => {
  it("indents by brace depth, ignoring braces inside strings and comments, ends members and aliases with semicolons, and lists top-level declarations", () => {
    const { code, declared } = indentDeclarations(
      'export interface A {\n/**\n * a { brace\n */\n"k{"?: ("}" | "{")\nb: {\nc: string\n}\nd: {\n[k: string]: number\n}[] /* n */\n}\nexport type B = ({\nx: 1\n} & {\ny: 2\n})\nexport type C = (B | null)\nexport enum E {\nX = "x",\nY = "y"\n}\n',
    );
    expect(declared).toEqual(["A", "B", "C", "E"]);
    expect(code).toBe(
      'export interface A {\n  /**\n   * a { brace\n   */\n  "k{"?: ("}" | "{");\n  b: {\n    c: string;\n  };\n  d: {\n    [k: string]: number;\n  }[]; /* n */\n}\n\nexport type B = ({\n  x: 1;\n} & {\n  y: 2;\n});\n\nexport type C = (B | null);\n\nexport enum E {\n  X = "x",\n  Y = "y"\n}',
    );
  });
});
