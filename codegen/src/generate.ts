import type { Manifest } from "@toolpact/contract";
import { StructureKind, type StatementStructures } from "ts-morph";
import { clientFactory, clientInterface, methodsInterface } from "./client.js";
import { descriptorStatement } from "./descriptors.js";
import { emitFile, type FilePlan, type PrintedStatements } from "./emit.js";
import { generatedHeader, type GeneratedFile } from "./generated-file.js";
import { indexStatements } from "./index-file.js";
import { Names, compare, planProviders, type ProviderPlan, type ToolPlan } from "./names.js";
import { defineFunction, handlersInterface } from "./provider.js";
import { compileSchemaTypes, type SchemaTypes } from "./schema-types.js";

/** Options of `generateClients`. */
export interface GenerateOptions {
  /** The manifest of the plugin that will call these clients: they then hold only the tools it may call. */
  readonly caller?: Manifest;
}

/** What `generateClients` (index.ts) does, in the module it imports on its first call. */
export async function generateClients(manifests: readonly Manifest[], options: GenerateOptions = {}): Promise<GeneratedFile[]> {
  const providers = planProviders(manifests, options.caller === undefined ? undefined : { manifest: options.caller });
  // Every schema's types first, then the files: json-schema-to-typescript and ts-morph's printer each
  // run in one stretch (taking turns per provider made codegen of 2,000 tools about 4 % slower).
  const schemaTypes = await compileToolSchemas(providers);
  // Each file is printed as soon as it is planned: its structures die young rather than being held
  // (and copied by the garbage collector) until every file has been planned.
  const files = providers.map((provider) => emitFile(providerFile(provider, schemaTypes)));
  files.push(
    emitFile({
      path: "index.ts",
      header: generatedHeader(providers.map((provider) => `${provider.manifest.id}@${provider.manifest.version}`).sort()),
      statements: indexStatements(providers),
    }),
  );
  return files.sort((a, b) => compare(a.path, b.path));
}

/** The declarations of one of a tool's schemas, and which schema it is (for collisions). */
interface ToolSchemaTypes {
  readonly where: string;
  readonly types: SchemaTypes;
}

/** Each tool's input and (when declared) output types, in that order. */
async function compileToolSchemas(providers: readonly ProviderPlan[]): Promise<Map<ToolPlan, ToolSchemaTypes[]>> {
  const compiled = new Map<ToolPlan, ToolSchemaTypes[]>();
  for (const provider of providers) {
    for (const plan of provider.tools) {
      const schemas: ToolSchemaTypes[] = [];
      for (const [schema, rootName, label] of [
        [plan.tool.inputSchema, plan.inputType, "inputSchema"],
        [plan.tool.outputSchema, plan.outputType, "outputSchema"],
      ] as const) {
        if (schema === undefined || rootName === undefined) continue;
        const where = `${plan.fullName} ${label}`;
        schemas.push({ where, types: await compileSchemaTypes(schema, rootName, where) });
      }
      compiled.set(plan, schemas);
    }
  }
  return compiled;
}

function providerFile(provider: ProviderPlan, schemaTypes: ReadonlyMap<ToolPlan, readonly ToolSchemaTypes[]>): FilePlan {
  const { manifest } = provider;
  const names = new Names(provider.file);
  for (const name of [provider.clientInterface, provider.clientFactory, provider.handlersInterface, provider.defineFunction]) {
    names.claim(name, `plugin ${manifest.id}`);
  }
  const statements: (StatementStructures | PrintedStatements)[] = [
    { kind: StructureKind.ImportDeclaration, namespaceImport: "toolpact", moduleSpecifier: "@toolpact/client" },
  ];
  const callable = new Set(provider.members.map((member) => member.tool));
  for (const plan of provider.tools) {
    for (const { where, types } of schemaTypes.get(plan)!) {
      for (const name of types.declared) names.claim(name, where);
      statements.push({ kind: "printed", code: types.code });
    }
    names.claim(plan.descriptorName, plan.fullName);
    statements.push(descriptorStatement(provider, plan));
    if (callable.has(plan)) {
      names.claim(plan.methodsInterface, plan.fullName);
      statements.push(methodsInterface(plan));
    }
  }
  // A provider the caller may call nothing of has no client: only what its own implementation needs.
  if (callable.size > 0) statements.push(clientInterface(provider), clientFactory(provider));
  statements.push(handlersInterface(provider), defineFunction(provider));
  return { path: provider.file, header: generatedHeader([`${manifest.id}@${manifest.version}`]), statements };
}
