import { compile } from "json-schema-to-typescript";
import { codegenError } from "./codegen-error.js";
import { JSON_SCHEMA_TO_TYPESCRIPT_OPTIONS } from "./schema-options.js";
import { indentDeclarations, type IndentedDeclarations } from "./reindent.js";
import { prepareSchema } from "./schema-prepare.js";

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
