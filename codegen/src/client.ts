import { StructureKind, type FunctionDeclarationStructure, type InterfaceDeclarationStructure, type WriterFunction } from "ts-morph";
import { commentText, doc, toolDoc } from "./docs.js";
import type { PrintedStatements } from "./emit.js";
import type { ProviderPlan, ToolPlan } from "./names.js";
import { StatementTemplate } from "./template.js";
import { objectLiteral } from "./writers.js";

/** Stand-ins in the printed template of a `<Tool>Methods` interface, replaced per tool. */
const METHODS = new StatementTemplate({
  interface: "ToolpactTemplateMethods",
  input: "ToolpactTemplateInput",
  output: "ToolpactTemplateOutput",
  /** The tool's full name as a string literal (quotes included). */
  literal: JSON.stringify("toolpact-template:tool@0"),
  /** The tool's full name inside a comment. */
  comment: "toolpact-template-comment:tool@0",
});
const TEMPLATE = METHODS.standIns;

/**
 * `export interface CreateRecordMethods { preview(...); confirm(...); execute(...) }`: one tool's client
 * with concrete signatures. A generic `ToolClient<Name, Input, Output>` per tool would cost the
 * type-checker an instantiation of every member at every call site; this costs what a hand-written
 * interface does. The shapes are those of `toolpact.ToolClient` and `toolpact.ConfirmedToolClient`,
 * which `createToolMethod` and `createConfirmedToolMethod` return.
 *
 * Every tool of one shape (confirmation required, output declared: four at most) has the same
 * interface but for its names, so it is printed once per shape as a template.
 */
export function methodsInterface(plan: ToolPlan): PrintedStatements {
  const confirmed = plan.tool.requiresConfirmation;
  const output = plan.outputType === undefined ? "unknown" : TEMPLATE.output;
  return METHODS.fill(`${confirmed}:${output}`, () => methodsStructure(confirmed, output), {
    interface: plan.methodsInterface,
    input: plan.inputType,
    output: plan.outputType ?? "unknown",
    literal: JSON.stringify(plan.fullName),
    comment: commentText(plan.fullName),
  });
}

function methodsStructure(confirmed: boolean, output: string): InterfaceDeclarationStructure {
  const preview = `toolpact.ToolPreview<${TEMPLATE.literal}>`;
  const token = `toolpact.ConfirmationToken<${TEMPLATE.literal}>`;
  return {
    kind: StructureKind.Interface,
    name: TEMPLATE.interface,
    isExported: true,
    docs: [doc(`How a caller calls \`${TEMPLATE.comment}\`${confirmed ? ": `execute` needs the token `confirm` returns" : ""}.`)],
    methods: [
      {
        name: "preview",
        docs: [
          doc(
            confirmed
              ? "Asks the provider what the call would do and opens the confirmation the call needs."
              : "Asks the provider what the call would do; the answer says whether a confirmation is needed.",
          ),
        ],
        parameters: [
          { name: "input", type: TEMPLATE.input },
          { name: "options", hasQuestionToken: true, type: "toolpact.PreviewOptions" },
        ],
        returnType: `Promise<${preview}>`,
      },
      {
        name: "confirm",
        docs: [
          doc(
            confirmed
              ? "This tool's confirmation token: at once in token mode; in platform mode once the user approves."
              : "This tool's confirmation token for the preview, or undefined when the preview needs none.",
          ),
        ],
        parameters: [
          { name: "preview", type: preview },
          { name: "options", hasQuestionToken: true, type: "toolpact.ConfirmOptions" },
        ],
        returnType: confirmed ? `Promise<${token}>` : `Promise<${token} | undefined>`,
      },
      {
        name: "execute",
        docs: [
          doc(
            confirmed
              ? "Runs the tool with the token `confirm` returned for a preview of the same input."
              : "Runs the tool; a token is optional (policy may still demand one: preview and confirm first then).",
          ),
        ],
        parameters: [
          { name: "input", type: TEMPLATE.input },
          confirmed
            ? { name: "options", type: `toolpact.ConfirmedExecuteOptions<${TEMPLATE.literal}>` }
            : { name: "options", hasQuestionToken: true, type: `toolpact.ExecuteCallOptions<${TEMPLATE.literal}>` },
        ],
        returnType: `Promise<toolpact.ExecuteResult<${output}>>`,
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
