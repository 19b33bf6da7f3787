import type { WriterFunction } from "ts-morph";
import { commentText } from "./docs.js";
import type { PrintedStatements } from "./emit.js";
import type { ProviderPlan, ToolPlan } from "./names.js";
import { StatementTemplate } from "./template.js";
import { objectLiteral } from "./writers.js";

/** Stand-ins in the printed template of a descriptor, replaced per tool. */
const DESCRIPTOR = new StatementTemplate({
  name: "toolpactTemplateDescriptor",
  providerId: "ToolpactTemplateProviderId",
  toolName: "ToolpactTemplateToolName",
  version: "ToolpactTemplateVersion",
  fullName: "ToolpactTemplateFullName",
  effect: "ToolpactTemplateEffect",
  requiresConfirmation: "ToolpactTemplateRequiresConfirmation",
  /** The tool's full name inside a comment. */
  comment: "toolpact-template-comment:tool@0",
});

/**
 * `export const createRecordDescriptor = { providerId, name, version, fullName, effect, requiresConfirmation } as const;`
 * (Written with the writer: a VariableStatement structure would hang-indent the multi-line literal.)
 * Every descriptor has one shape, so it is printed once as a template.
 */
export function descriptorStatement(provider: ProviderPlan, plan: ToolPlan): PrintedStatements {
  const { tool } = plan;
  return DESCRIPTOR.fill("descriptor", descriptorWriter, {
    name: plan.descriptorName,
    providerId: JSON.stringify(provider.manifest.id),
    toolName: JSON.stringify(tool.name),
    version: String(tool.version),
    fullName: JSON.stringify(plan.fullName),
    effect: JSON.stringify(tool.effect),
    requiresConfirmation: String(tool.requiresConfirmation),
    comment: commentText(plan.fullName),
  });
}

function descriptorWriter(): WriterFunction {
  const standIn = DESCRIPTOR.standIns;
  const literal = objectLiteral([
    ["providerId", standIn.providerId],
    ["name", standIn.toolName],
    ["version", standIn.version],
    ["fullName", standIn.fullName],
    ["effect", standIn.effect],
    ["requiresConfirmation", standIn.requiresConfirmation],
  ]);
  return (writer) => {
    writer.writeLine(`/** ${commentText(`What the runtime needs to call \`${standIn.comment}\`.`)} */`);
    writer.write(`export const ${standIn.name} = `);
    literal(writer);
    writer.write(" as const;");
  };
}
