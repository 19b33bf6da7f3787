import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020, type Options } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { parse, type ParseError } from "jsonc-parser";
import { describe, expect, it } from "vitest";
import { parseManifest } from "./loader.js";
import { manifestSchema } from "./manifest.js";
import { MANIFEST_SCHEMA_ID, manifestJsonSchema } from "./manifest-json-schema.js";

const PACKAGE = fileURLToPath(new URL("../", import.meta.url));
const FIXTURES = join(PACKAGE, "fixtures");

/** Every fixture manifest that parses as JSONC, valid or not. */
function fixtureValues(directories = [FIXTURES, join(FIXTURES, "invalid")]): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const directory of directories) {
    for (const name of readdirSync(directory)
      .filter((file) => file.endsWith(".json"))
      .sort()) {
      const errors: ParseError[] = [];
      const value = parse(readFileSync(join(directory, name), "utf8"), errors, { allowTrailingComma: true }) as unknown;
      if (errors.length === 0) out.push([name, value]);
    }
  }
  return out;
}

/** The manifest with every tool's inputSchema and outputSchema replaced by `{ "type": "object" }`. */
function withPlainToolSchemas(value: unknown): unknown {
  const tools = (value as { tools?: unknown }).tools;
  if (!Array.isArray(tools)) return value;
  const plain = (tool: unknown): unknown => {
    if (typeof tool !== "object" || tool === null) return tool;
    const copy: Record<string, unknown> = { ...tool };
    for (const key of ["inputSchema", "outputSchema"])
      if (typeof copy[key] === "object" && copy[key] !== null && !Array.isArray(copy[key])) copy[key] = { type: "object" };
    return copy;
  };
  return { ...(value as object), tools: tools.map(plain) };
}

const base = { id: "com.example.x", version: "1.0.0", permissions: ["tools:provide"] };
const tool = { name: "do-it", effect: "read", inputSchema: { type: "object" } };

/** Manifests on both sides of each field-level rule. */
const CASES: [string, unknown][] = [
  ["minimal", base],
  ["with a tool", { ...base, tools: [tool] }],
  [
    "every optional field",
    {
      ...base,
      alias: "x",
      name: "X",
      description: "d",
      uses: ["*", "com.example.*", "a.b:c-d@2"],
      tools: [
        {
          ...tool,
          version: 2,
          title: "T",
          description: "D",
          requiresConfirmation: true,
          minVerificationLevel: 3,
          recovery: "idempotent",
          timeoutMs: 600_000,
          outputSchema: {},
        },
      ],
      gates: [{ name: "g", appliesTo: ["*"], timeoutMs: 5 }],
      hooks: [{ name: "h", point: "afterTool", appliesTo: ["*"] }],
      guards: [{ name: "g", appliesTo: ["*"] }],
    },
  ],
  ["reserved tool name", { ...base, tools: [{ ...tool, name: "then" }] }],
  ["reserved tool name to-string", { ...base, tools: [{ ...tool, name: "to-string" }] }],
  ["uppercase tool name", { ...base, tools: [{ ...tool, name: "Do-it" }] }],
  ["65-character tool name", { ...base, tools: [{ ...tool, name: "a".repeat(65) }] }],
  ["64-character tool name", { ...base, tools: [{ ...tool, name: "a".repeat(64) }] }],
  ["129-character id", { ...base, id: "a".repeat(129) }],
  ["bad alias", { ...base, alias: "Notes" }],
  ["non-semver version", { ...base, version: "1" }],
  ["unknown permission", { ...base, permissions: ["tools:everything"] }],
  ["bad uses pattern", { ...base, uses: ["com.example.notes:Create"] }],
  ["hook point beforeTool", { ...base, hooks: [{ name: "h", point: "beforeTool", appliesTo: ["*"] }] }],
  ["gate without appliesTo entries", { ...base, gates: [{ name: "g", appliesTo: [] }] }],
  ["timeout 0", { ...base, tools: [{ ...tool, timeoutMs: 0 }] }],
  ["version 0", { ...base, tools: [{ ...tool, version: 0 }] }],
  ["version 1.5", { ...base, tools: [{ ...tool, version: 1.5 }] }],
  ["level 4", { ...base, tools: [{ ...tool, minVerificationLevel: 4 }] }],
  ["inputSchema an array", { ...base, tools: [{ ...tool, inputSchema: [] }] }],
  ["extra key in a tool", { ...base, tools: [{ ...tool, color: "red" }] }],
  ["extra key at the root", { ...base, colour: "red" }],
  ["empty tools", { ...base, tools: [] }],
  ["missing version", { id: "com.example.x" }],
];

/**
 * ajv as an editor would apply the file: the meta-schemas it bundles use `regex`, `uri` and
 * `uri-reference`, which ajv-formats checks (without it, ajv warns that it ignores them).
 */
function editorAjv(options: Options): Ajv2020 {
  const ajv = new Ajv2020(options);
  addFormats.default(ajv);
  return ajv;
}

describe("manifest.schema.json", () => {
  it("is the committed output of manifestJsonSchema()", () => {
    const committed = readFileSync(join(PACKAGE, "manifest.schema.json"), "utf8");
    // On a mismatch: pnpm --filter @toolpact/contract manifest-schema
    expect(committed).toBe(JSON.stringify(manifestJsonSchema(), null, 2) + "\n");
  });

  it("is a valid 2020-12 schema", () => {
    const ajv = editorAjv({ strict: true, allErrors: true });
    expect(ajv.validateSchema(manifestJsonSchema())).toBe(true);
  });

  it("accepts and rejects what the zod schema does, on every fixture and each field-level rule", () => {
    const validate = editorAjv({ allErrors: true, strict: false }).compile(manifestJsonSchema());
    // The shape of the manifest only: what tool schemas may hold is the next test's (zod takes any object there).
    const cases = [...fixtureValues(), ...CASES].map(([name, value]) => [name, withPlainToolSchemas(value)] as const);
    const verdicts = cases.map(([name, value]) => ({
      name,
      zod: manifestSchema.safeParse(value).success,
      jsonSchema: validate(value),
    }));
    expect(verdicts.filter((verdict) => verdict.zod !== verdict.jsonSchema)).toEqual([]);
    // Both sides are exercised: the comparison is not vacuous.
    expect(verdicts.filter((verdict) => verdict.zod).length).toBeGreaterThanOrEqual(10);
    expect(verdicts.filter((verdict) => !verdict.zod).length).toBeGreaterThanOrEqual(20);
  });

  it("has an $id and bundles everything it refers to (no reference leaves the file)", () => {
    const schema = manifestJsonSchema();
    expect(schema["$id"]).toBe(MANIFEST_SCHEMA_ID);
    const refs = JSON.stringify(schema).match(/"\$(?:dynamic)?[rR]ef":"[^"]*"/g) ?? [];
    expect(refs.length).toBeGreaterThan(20);
    expect(refs.filter((ref) => !ref.includes('"#/$defs/'))).toEqual([]);
  });

  describe("applies the JSON Schema meta-schema to inputSchema and outputSchema", () => {
    const validate = editorAjv({ allErrors: true, strict: false }).compile(manifestJsonSchema());
    const withSchemas = (inputSchema: unknown, outputSchema: unknown = { type: "object" }): unknown => ({
      ...base,
      tools: [{ ...tool, inputSchema, outputSchema }],
    });
    const errorsOf = (manifest: unknown): string[] => {
      validate(manifest);
      return (validate.errors ?? []).map(
        (error) => `${error.instancePath} ${error.message}${error.keyword === "additionalProperties" ? ` ${JSON.stringify(error.params)}` : ""}`,
      );
    };

    it('flags a "requird" typo and a misspelt type at their paths, as the loader does', () => {
      const typo = withSchemas({ type: "object", properties: { title: { type: "string" } }, requird: ["title"] });
      expect(errorsOf(typo)).toContain('/tools/0/inputSchema must NOT have additional properties {"additionalProperty":"requird"}');
      expect(parseManifest(JSON.stringify(typo), "plugin.json").ok).toBe(false);
      const nested = withSchemas({ type: "object" }, { type: "object", properties: { at: { type: "strnig" } } });
      expect(errorsOf(nested).some((error) => error.startsWith("/tools/0/outputSchema/properties/at/type "))).toBe(true);
      expect(
        errorsOf(withSchemas({ type: "object", properties: { a: { minLength: -1 } } })).some((error) =>
          error.startsWith("/tools/0/inputSchema/properties/a/minLength "),
        ),
      ).toBe(true);
    });

    it("passes every valid fixture as written, draft-07 schemas, and x- extensions", () => {
      const valid = fixtureValues([FIXTURES]).filter(([name]) => parseManifest(readFileSync(join(FIXTURES, name), "utf8"), name).ok);
      expect(valid.length).toBeGreaterThanOrEqual(5);
      for (const [name, value] of valid) expect(errorsOf(value), name).toEqual([]);
      const draft07 = {
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        properties: { pair: { type: "array", items: [{ type: "string" }, { type: "number" }], additionalItems: false } },
        definitions: { a: { type: "string" } },
      };
      expect(errorsOf(withSchemas(draft07))).toEqual([]);
      expect(errorsOf(withSchemas({ type: "object", "x-ui": { order: 1 }, properties: { a: { type: "string", "x-label": "A" } } }))).toEqual([]);
      expect(
        errorsOf(
          withSchemas({
            type: "object",
            prefixItems: [true],
            unevaluatedProperties: false,
            $defs: { a: { $anchor: "a", const: 1 } },
            dependentRequired: { a: ["b"] },
          }),
        ),
      ).toEqual([]);
    });
  });
});
