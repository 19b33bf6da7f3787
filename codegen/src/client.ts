import { StructureKind, type FunctionDeclarationStructure, type InterfaceDeclarationStructure, type WriterFunction } from "ts-morph";
import { doc, toolDoc } from "./docs.js";
import type { ProviderPlan, ToolPlan } from "./names.js";
import { objectLiteral } from "./writers.js";

/** The type of a tool's client: `toolpact.ConfirmedToolClient<"<full name>", Input, Output>` or `toolpact.ToolClient<...>`. */
export function toolClientType(plan: ToolPlan): string {
  const client = plan.tool.requiresConfirmation ? "ConfirmedToolClient" : "ToolClient";
  return `toolpact.${client}<${JSON.stringify(plan.fullName)}, ${plan.inputType}, ${plan.outputType ?? "unknown"}>`;
}

/** `export interface NotesClient { readonly createRecord: ...; }`: one documented property per method. */
export function clientInterface(provider: ProviderPlan): InterfaceDeclarationStructure {
  const { manifest } = provider;
  return {
    kind: StructureKind.Interface,
    name: provider.clientInterface,
    isExported: true,
    docs: [doc(`The typed client of ${manifest.id}${manifest.name ? ` (${manifest.name})` : ""}: one member per tool method.`)],
    properties: provider.members.map((member) => ({
      name: member.name,
      isReadonly: true,
      type: toolClientType(member.tool),
      docs: [toolDoc(member.tool, member.isLatestAlias)],
    })),
  };
}

/** `export function createNotesClient(transport) { ... }` over the descriptors. */
export function clientFactory(provider: ProviderPlan): FunctionDeclarationStructure {
  const methods = objectLiteral(provider.tools.map((plan) => [plan.key, methodCall(plan)]));
  const aliases = provider.members.filter((member) => member.isLatestAlias);
  const body: WriterFunction = (writer) => {
    if (aliases.length === 0) {
      writer.write("return ");
      methods(writer);
      writer.write(";");
      return;
    }
    writer.write("const methods = ");
    methods(writer);
    writer.write(";").newLine();
    writer.write("return ");
    objectLiteral([[undefined, "methods"], ...aliases.map((member) => [member.name, `methods.${member.tool.key}`] as const)])(writer);
    writer.write(";");
  };
  return {
    kind: StructureKind.Function,
    name: provider.clientFactory,
    isExported: true,
    docs: [doc(`Creates the typed client of ${provider.manifest.id} over a transport.`)],
    parameters: [{ name: "transport", type: "toolpact.ToolTransport" }],
    returnType: provider.clientInterface,
    statements: [body],
  };
}

function methodCall(plan: ToolPlan): string {
  const factory = plan.tool.requiresConfirmation ? "createConfirmedToolMethod" : "createToolMethod";
  return `toolpact.${factory}<${JSON.stringify(plan.fullName)}, ${plan.inputType}, ${plan.outputType ?? "unknown"}>(transport, ${plan.descriptorName})`;
}
