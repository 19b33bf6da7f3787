import {
  StructureKind,
  type ExportDeclarationStructure,
  type FunctionDeclarationStructure,
  type ImportDeclarationStructure,
  type InterfaceDeclarationStructure,
  type StatementStructures,
} from "ts-morph";
import { doc } from "./docs.js";
import type { ProviderPlan } from "./names.js";
import { objectLiteral } from "./writers.js";

/**
 * `index.ts`: re-exports each provider (its client, handlers and `define<Alias>Provider` by name,
 * everything else under its namespace, e.g. `Notes.CreateRecordInput`) and declares
 * `createToolClients(transport)`.
 */
export function indexStatements(providers: readonly ProviderPlan[]): StatementStructures[] {
  const withClients = providers.filter(hasClient);
  const imports: ImportDeclarationStructure[] = [
    { kind: StructureKind.ImportDeclaration, isTypeOnly: true, namespaceImport: "toolpact", moduleSpecifier: "@toolpact/client" },
    ...withClients.map(
      (provider): ImportDeclarationStructure => ({
        kind: StructureKind.ImportDeclaration,
        moduleSpecifier: moduleOf(provider),
        namedImports: [provider.clientFactory, { name: provider.clientInterface, isTypeOnly: true }],
      }),
    ),
  ];
  const reexports = providers.flatMap((provider): ExportDeclarationStructure[] => [
    {
      kind: StructureKind.ExportDeclaration,
      moduleSpecifier: moduleOf(provider),
      namedExports: hasClient(provider)
        ? [
            provider.clientFactory,
            provider.defineFunction,
            { name: provider.clientInterface, isTypeOnly: true },
            { name: provider.handlersInterface, isTypeOnly: true },
          ]
        : [provider.defineFunction, { name: provider.handlersInterface, isTypeOnly: true }],
    },
    { kind: StructureKind.ExportDeclaration, moduleSpecifier: moduleOf(provider), namespaceExport: provider.namespace },
  ]);
  const clients: InterfaceDeclarationStructure = {
    kind: StructureKind.Interface,
    name: "ToolClients",
    isExported: true,
    docs: [doc("Every provider's typed client, under its client name.")],
    properties: withClients.map((provider) => ({
      name: provider.clientName,
      isReadonly: true,
      type: provider.clientInterface,
      docs: [doc(providerSummary(provider))],
    })),
  };
  const factory: FunctionDeclarationStructure = {
    kind: StructureKind.Function,
    name: "createToolClients",
    isExported: true,
    docs: [
      doc(
        "Typed clients of every provider over one transport.\n\n@example\n" +
          "const tools = createToolClients(createHttpTransport({ url, pluginKey, actorToken }));",
      ),
    ],
    parameters: [{ name: "transport", type: "toolpact.ToolTransport" }],
    returnType: "ToolClients",
    statements: [
      (writer) => {
        writer.write("return ");
        objectLiteral(withClients.map((provider) => [provider.clientName, `${provider.clientFactory}(transport)`]))(writer);
        writer.write(";");
      },
    ],
  };
  return [...imports, ...reexports, clients, factory];
}

/** A provider has a client unless a caller's `uses` leaves it no tool to call. */
function hasClient(provider: ProviderPlan): boolean {
  return provider.members.length > 0;
}

function moduleOf(provider: ProviderPlan): string {
  return `./${provider.file.replace(/\.ts$/, ".js")}`;
}

function providerSummary(provider: ProviderPlan): string {
  const { manifest } = provider;
  const about = [manifest.name, manifest.description].filter((part): part is string => part !== undefined && part.trim() !== "");
  return [`${manifest.id}@${manifest.version}`, ...about].join(": ");
}
