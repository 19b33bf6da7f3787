import type { ToolPlan } from "./names.js";

/**
 * Text from a manifest, safe inside a block comment: "*\/" cannot end the comment and "/\*" cannot
 * confuse the writer's comment tracking; "\n" line breaks.
 */
export function commentText(text: string): string {
  return text.replace(/\r\n?/g, "\n").replaceAll("*/", "*\\/").replaceAll("/*", "/\\*").trim();
}

/**
 * One JSDoc block of plain text. A JSDoc given to ts-morph as its text is printed as a
 * `JSDocStructure` with that description would be, without the scratch writer ts-morph fills
 * for each structure and each of its tags (per tool twice: about half the time printing a provider's
 * interfaces took).
 */
export function doc(text: string): string {
  return commentText(text);
}

/**
 * The JSDoc of a tool's method and handler: title and description, then what it does to the
 * world and whether the manifest requires confirmation, e.g. `@effect write · requires confirmation`.
 * The tags are lines of the text, as ts-morph prints `JSDocTagStructure`s: `@<name> <text>`.
 */
export function toolDoc(plan: ToolPlan, isLatestAlias = false): string {
  const { tool } = plan;
  const parts = [tool.title, tool.description].filter((part): part is string => part !== undefined && part.trim() !== "");
  if (isLatestAlias) parts.push(`The highest declared version (${tool.version}) of "${tool.name}".`);
  const confirmation = tool.requiresConfirmation ? "requires confirmation" : "confirmation optional";
  const description = parts.map(commentText).join("\n\n");
  const tags = [`@effect ${tool.effect} · ${confirmation}`, `@tool ${plan.fullName}`];
  return (description === "" ? tags : [description, ...tags]).join("\n");
}
