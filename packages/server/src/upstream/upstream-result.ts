import type { CallToolResult } from "@modelcontextprotocol/client";
import type { ToolDeclaration } from "@toolpact/contract";
import { ProviderRefusal } from "@toolpact/runtime";

/** A tool's output when its manifest declares no outputSchema: the server's text joined, and its content blocks as sent. */
export interface UpstreamContentOutput {
  /** Every text block, joined by line breaks ("" when there is none). */
  readonly text: string;
  /** The MCP content blocks (text, image, audio, resource links, embedded resources). */
  readonly content: readonly unknown[];
  /** The server's structuredContent, when it sent one. */
  readonly structuredContent?: unknown;
}

/**
 * What an MCP tool result becomes for toolpact. A tool whose manifest declares an outputSchema answers
 * with the result's `structuredContent` (validated against the manifest's schema by the runtime, as any
 * output is); one without answers `{ text, content, structuredContent? }`. `isError: true` is the tool
 * saying it failed: a ProviderRefusal with its text, which the caller gets made visible.
 */
export function outputOfUpstream(declaration: ToolDeclaration, result: CallToolResult): unknown {
  const content: readonly unknown[] = Array.isArray(result.content) ? result.content : [];
  const text = content
    .filter((block): block is { type: "text"; text: string } => isTextBlock(block))
    .map((block) => block.text)
    .join("\n");
  if (result.isError === true) {
    throw new ProviderRefusal(text === "" ? "the upstream tool reported an error and said nothing more" : text);
  }
  if (declaration.outputSchema !== undefined) return result.structuredContent;
  return result.structuredContent === undefined ? { text, content } : { text, content, structuredContent: result.structuredContent };
}

function isTextBlock(block: unknown): boolean {
  return typeof block === "object" && block !== null && (block as { type?: unknown }).type === "text" && typeof (block as { text?: unknown }).text === "string";
}
