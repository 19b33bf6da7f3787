import { compile, type Options } from "json-schema-to-typescript";
import { codegenError } from "./codegen-error.js";
import { indentDeclarations, type IndentedDeclarations } from "./reindent.js";
import { prepareSchema } from "./schema-prepare.js";

/**
 * json-schema-to-typescript, set up once. `additionalProperties: false` is only the default for
 * objects that do not say: an object that names its properties is closed (an unknown field is a
 * compile error through TypeScript's excess property check), while `additionalProperties: true`
 * or a schema in the manifest gives an index signature. Item counts are constraints, checked at
 * run time like `minLength`, not tuple types.
 */
/** The json-schema-to-typescript options codegen uses (the codegen benchmark compares against them). */
export const JSON_SCHEMA_TO_TYPESCRIPT_OPTIONS: Readonly<Partial<Options>> = {
  additionalProperties: false,
  bannerComment: "",
  declareExternallyReferenced: true,
  enableConstEnums: false,
  format: false,
  ignoreMinAndMaxItems: true,
  inferStringEnumKeysFromValues: false,
  strictIndexSignatures: true,
  unknownAny: true,
  unreachableDefinitions: false,
  $refOptions: { resolve: { external: false } },
};

/** The declarations for one tool schema: `rootName` and the named parts inside it. */
export type SchemaTypes = IndentedDeclarations;

/**
 * Compiles one tool schema into flat declarations: the root is `rootName`; every other named part
 * (a `$defs` entry, a titled subschema) is `<rootName>_<Name>`, so names never collide across the
 * tools of one file, nor with the names codegen writes itself (which never contain "_").
 */
export async function compileSchemaTypes(schema: unknown, rootName: string, where: string): Promise<SchemaTypes> {
  const prepared = prepareSchema(schema, rootName, where);
  let code: string;
  try {
    code = await compile(prepared, rootName, {
      ...JSON_SCHEMA_TO_TYPESCRIPT_OPTIONS,
      customName: (part, keyName) => {
        const name = part.title ?? part.$id ?? keyName;
        if (name === undefined || name === rootName) return undefined;
        return `${rootName}_${safeName(name)}`;
      },
    });
  } catch (error) {
    throw codegenError(`${where} cannot be turned into types: ${(error as Error).message}`, error);
  }
  const result = indentDeclarations(code);
  if (!result.declared.includes(rootName)) {
    throw codegenError(`${where}: json-schema-to-typescript did not declare ${rootName}; this schema's root cannot be named`);
  }
  return result;
}

/** A schema title or `$defs` key as an identifier part, as json-schema-to-typescript would make it. */
function safeName(name: string): string {
  const words = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join("") || "Part";
}
