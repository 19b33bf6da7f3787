import type { Manifest } from "@toolpact/contract";
import { StructureKind, type StatementStructures, type WriterFunction } from "ts-morph";
import { clientFactory, clientInterface, methodsInterface } from "./client.js";
import { descriptorStatement } from "./descriptors.js";
import { emitFiles, type FilePlan, type TypeDeclarations } from "./emit.js";
import { generatedHeader, type GeneratedFile } from "./generated-file.js";
import { indexStatements } from "./index-file.js";
import { Names, compare, planProviders, type ProviderPlan } from "./names.js";
import { defineFunction, handlersInterface } from "./provider.js";
import { compileSchemaTypes } from "./schema-types.js";

/** Options of `generateClients`. */
export interface GenerateOptions {
  /** The manifest of the plugin that will call these clients: they then hold only the tools it may call. */
  readonly caller?: Manifest;
}

/** What `generateClients` (index.ts) does, in the module it imports on its first call. */
export async function generateClients(manifests: readonly Manifest[], options: GenerateOptions = {}): Promise<GeneratedFile[]> {
  const providers = planProviders(manifests, options.caller === undefined ? undefined : { manifest: options.caller });
  const plans: FilePlan[] = [];
  for (const provider of providers) plans.push(await providerFile(provider));
  plans.push({
    path: "index.ts",
    header: generatedHeader(providers.map((provider) => `${provider.manifest.id}@${provider.manifest.version}`).sort()),
    statements: indexStatements(providers),
  });
  return emitFiles(plans).sort((a, b) => compare(a.path, b.path));
}

async function providerFile(provider: ProviderPlan): Promise<FilePlan> {
  const { manifest } = provider;
  const names = new Names(provider.file);
  for (const name of [provider.clientInterface, provider.clientFactory, provider.handlersInterface, provider.defineFunction]) {
    names.claim(name, `plugin ${manifest.id}`);
  }
  const statements: (StatementStructures | WriterFunction | TypeDeclarations)[] = [
    { kind: StructureKind.ImportDeclaration, namespaceImport: "toolpact", moduleSpecifier: "@toolpact/client" },
  ];
  const callable = new Set(provider.members.map((member) => member.tool));
  for (const plan of provider.tools) {
    for (const [schema, rootName, label] of [
      [plan.tool.inputSchema, plan.inputType, "inputSchema"],
      [plan.tool.outputSchema, plan.outputType, "outputSchema"],
    ] as const) {
      if (schema === undefined || rootName === undefined) continue;
      const where = `${plan.fullName} ${label}`;
      const types = await compileSchemaTypes(schema, rootName, where);
      for (const name of types.declared) names.claim(name, where);
      statements.push({ kind: "type-declarations", code: types.code });
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
