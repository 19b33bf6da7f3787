import { StructureKind, type JSDocStructure, type OptionalKind } from "ts-morph";
import type { ToolPlan } from "./names.js";

/**
 * Text from a manifest, safe inside a block comment: "*\/" cannot end the comment and "/\*" cannot
 * confuse the writer's comment tracking; "\n" line breaks.
 */
export function commentText(text: string): string {
  return text.replace(/\r\n?/g, "\n").replaceAll("*/", "*\\/").replaceAll("/*", "/\\*").trim();
}

/** One JSDoc block of plain text. */
export function doc(text: string): OptionalKind<JSDocStructure> {
  return { kind: StructureKind.JSDoc, description: commentText(text) };
}

/**
 * The JSDoc of a tool's method and handler: title and description, then what it does to the
 * world and whether the manifest requires confirmation, e.g. `@effect write · requires confirmation`.
 */
export function toolDoc(plan: ToolPlan, isLatestAlias = false): OptionalKind<JSDocStructure> {
  const { tool } = plan;
  const parts = [tool.title, tool.description].filter((part): part is string => part !== undefined && part.trim() !== "");
  if (isLatestAlias) parts.push(`The highest declared version (${tool.version}) of "${tool.name}".`);
  const confirmation = tool.requiresConfirmation ? "requires confirmation" : "confirmation optional";
  return {
    kind: StructureKind.JSDoc,
    description: parts.map(commentText).join("\n\n"),
    tags: [
      { kind: StructureKind.JSDocTag, tagName: "effect", text: `${tool.effect} · ${confirmation}` },
      { kind: StructureKind.JSDocTag, tagName: "tool", text: plan.fullName },
    ],
  };
}
