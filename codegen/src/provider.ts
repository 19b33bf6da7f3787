import { StructureKind, type FunctionDeclarationStructure, type InterfaceDeclarationStructure } from "ts-morph";
import { doc, toolDoc } from "./docs.js";
import type { ProviderPlan } from "./names.js";
import { objectLiteral } from "./writers.js";

/** `export interface NotesProviderHandlers`: exactly one handler per declared tool version, typed by its schemas. */
export function handlersInterface(provider: ProviderPlan): InterfaceDeclarationStructure {
  return {
    kind: StructureKind.Interface,
    name: provider.handlersInterface,
    isExported: true,
    docs: [doc(`Handlers for every tool ${provider.manifest.id} declares: a missing or an extra key does not compile.`)],
    properties: provider.tools.map((plan) => ({
      name: plan.key,
      isReadonly: true,
      type: `toolpact.ToolHandler<${plan.inputType}, ${plan.outputType ?? "unknown"}>`,
      docs: [toolDoc(plan)],
    })),
  };
}

/** `export function defineNotesProvider(handlers)`: the definition `sdk.tools.provideAll` takes. */
export function defineFunction(provider: ProviderPlan): FunctionDeclarationStructure {
  const tools = objectLiteral(provider.tools.map((plan) => [plan.key, plan.descriptorName]));
  return {
    kind: StructureKind.Function,
    name: provider.defineFunction,
    isExported: true,
    docs: [doc(`Defines the provider of ${provider.manifest.id} for \`sdk.tools.provideAll\`.`)],
    parameters: [{ name: "handlers", type: provider.handlersInterface }],
    returnType: "toolpact.ProviderDefinition",
    statements: [
      (writer) => {
        writer.write(`return toolpact.defineProvider(${JSON.stringify(provider.manifest.id)}, `);
        tools(writer);
        writer.write(", handlers);");
      },
    ],
  };
}
