import type { WriterFunction } from "ts-morph";
import { commentText } from "./docs.js";
import type { ProviderPlan, ToolPlan } from "./names.js";
import { block, objectLiteral } from "./writers.js";

/**
 * `export const createRecordDescriptor = { providerId, name, version, fullName, effect, requiresConfirmation } as const;`
 * (Written with the writer: a VariableStatement structure would hang-indent the multi-line literal.)
 */
export function descriptorStatement(provider: ProviderPlan, plan: ToolPlan): WriterFunction {
  const { tool } = plan;
  const literal = objectLiteral([
    ["providerId", JSON.stringify(provider.manifest.id)],
    ["name", JSON.stringify(tool.name)],
    ["version", String(tool.version)],
    ["fullName", JSON.stringify(plan.fullName)],
    ["effect", JSON.stringify(tool.effect)],
    ["requiresConfirmation", String(tool.requiresConfirmation)],
  ]);
  return block((writer) => {
    writer.writeLine(`/** ${commentText(`What the runtime needs to call \`${plan.fullName}\`.`)} */`);
    writer.write(`export const ${plan.descriptorName} = `);
    literal(writer);
    writer.write(" as const;");
  });
}
