import { StructureKind, type FunctionDeclarationStructure, type InterfaceDeclarationStructure, type WriterFunction } from "ts-morph";
import { doc, toolDoc } from "./docs.js";
import type { ProviderPlan, ToolPlan } from "./names.js";
import { objectLiteral } from "./writers.js";

/**
 * `export interface CreateRecordMethods { preview(...); confirm(...); execute(...) }`: one tool's client
 * with concrete signatures. A generic `ToolClient<Name, Input, Output>` per tool would cost the
 * type-checker an instantiation of every member at every call site; this costs what a hand-written
 * interface does. The shapes are those of `toolpact.ToolClient` and `toolpact.ConfirmedToolClient`,
 * which `createToolMethod` and `createConfirmedToolMethod` return.
 */
export function methodsInterface(plan: ToolPlan): InterfaceDeclarationStructure {
  const name = JSON.stringify(plan.fullName);
  const preview = `toolpact.ToolPreview<${name}>`;
  const token = `toolpact.ConfirmationToken<${name}>`;
  const confirmed = plan.tool.requiresConfirmation;
  return {
    kind: StructureKind.Interface,
    name: plan.methodsInterface,
    isExported: true,
    docs: [doc(`How a caller calls \`${plan.fullName}\`${confirmed ? ": `execute` needs the token `confirm` returns" : ""}.`)],
    methods: [
      {
        name: "preview",
        docs: [doc(confirmed ? "Asks the provider what the call would do and opens the confirmation the call needs." : "Asks the provider what the call would do; the answer says whether a confirmation is needed.")],
        parameters: [
          { name: "input", type: plan.inputType },
          { name: "options", hasQuestionToken: true, type: "toolpact.PreviewOptions" },
        ],
        returnType: `Promise<${preview}>`,
      },
      {
        name: "confirm",
        docs: [doc(confirmed ? "This tool's confirmation token: at once in token mode; in platform mode once the user approves." : "This tool's confirmation token for the preview, or undefined when the preview needs none.")],
        parameters: [
          { name: "preview", type: preview },
          { name: "options", hasQuestionToken: true, type: "toolpact.ConfirmOptions" },
        ],
        returnType: confirmed ? `Promise<${token}>` : `Promise<${token} | undefined>`,
      },
      {
        name: "execute",
        docs: [doc(confirmed ? "Runs the tool with the token `confirm` returned for a preview of the same input." : "Runs the tool; a token is optional (policy may still demand one: preview and confirm first then).")],
        parameters: [
          { name: "input", type: plan.inputType },
          confirmed
            ? { name: "options", type: `toolpact.ConfirmedExecuteOptions<${name}>` }
            : { name: "options", hasQuestionToken: true, type: `toolpact.ExecuteCallOptions<${name}>` },
        ],
        returnType: `Promise<toolpact.ExecuteResult<${plan.outputType ?? "unknown"}>>`,
      },
    ],
  };
}

/** `export interface NotesClient { readonly createRecord: CreateRecordMethods; }`: one documented property per method. */
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
      type: member.tool.methodsInterface,
      docs: [toolDoc(member.tool, member.isLatestAlias)],
    })),
  };
}

/**
 * `export function createNotesClient(transport) { ... }` over the descriptors. Each member is what
 * `createToolMethod`/`createConfirmedToolMethod` return for the tool's descriptor, whose shape the
 * tool's `<Tool>Methods` spells out (codegen's type tests prove the two match). The object is typed
 * by its keys only, so a consumer's compiler does not compare every tool's client with its interface
 * again on every build; a missing or extra key still does not compile.
 */
export function clientFactory(provider: ProviderPlan): FunctionDeclarationStructure {
  const callable = provider.members.filter((member) => !member.isLatestAlias).map((member) => member.tool);
  const methods = objectLiteral(callable.map((plan) => [plan.key, methodCall(plan)]));
  const aliases = provider.members.filter((member) => member.isLatestAlias);
  const keys = `Record<keyof ${provider.clientInterface}, unknown>`;
  const body: WriterFunction = (writer) => {
    if (aliases.length === 0) {
      writer.write(`const client: ${keys} = `);
      methods(writer);
      writer.write(";").newLine();
    } else {
      writer.write("const methods = ");
      methods(writer);
      writer.write(";").newLine();
      writer.write(`const client: ${keys} = `);
      objectLiteral([[undefined, "methods"], ...aliases.map((member) => [member.name, `methods.${member.tool.key}`] as const)])(writer);
      writer.write(";").newLine();
    }
    writer.write(`return client as ${provider.clientInterface};`);
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
  // The same type arguments for every tool: the compiler instantiates the signature once per file, not once per tool.
  return `toolpact.${factory}<string, unknown, unknown>(transport, ${plan.descriptorName})`;
}
