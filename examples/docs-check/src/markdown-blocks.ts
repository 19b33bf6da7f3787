/** Fenced code blocks of a Markdown file, with where they are and what their info string says. */

/** One fenced block: ```` ```<lang> key=value flag ```` … ```` ``` ````. */
export interface CodeBlock {
  /** The Markdown file, relative to the repository root. */
  readonly file: string;
  /** 1-based line of the block's first content line. */
  readonly line: number;
  /** The info string's first word (`ts`, `sh`, `jsonc`, …); empty when there is none. */
  readonly lang: string;
  /** The info string's other words: `key=value` pairs, and bare flags as `true`. */
  readonly attributes: Readonly<Record<string, string | true>>;
  /** The block's text, ending with a newline. */
  readonly content: string;
}

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;

/** Every fenced code block of `text`, in order. Indented (four-space) code blocks are not used in these docs. */
export function codeBlocks(file: string, text: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = text.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const open = FENCE.exec(lines[index]!);
    if (open === null) continue;
    const [, indent = "", fence = "", info = ""] = open;
    const body: string[] = [];
    let end = index + 1;
    for (; end < lines.length; end++) {
      const close = lines[end]!;
      if (close.trim().startsWith(fence) && close.trim().replace(/[`~]/g, "") === "") break;
      body.push(close.startsWith(indent) ? close.slice(indent.length) : close.trimStart());
    }
    if (end >= lines.length) throw new Error(`${file}:${index + 1}: a code fence is never closed`);
    const [lang = "", ...words] = info.trim().split(/\s+/).filter(Boolean);
    const attributes: Record<string, string | true> = {};
    for (const word of words) {
      const equals = word.indexOf("=");
      if (equals < 0) attributes[word] = true;
      else attributes[word.slice(0, equals)] = word.slice(equals + 1);
    }
    blocks.push({ file, line: index + 2, lang, attributes, content: body.length === 0 ? "" : `${body.join("\n")}\n` });
    index = end;
  }
  return blocks;
}

/** `file:line` of a block's `offset`-th content line (0-based). */
export function where(block: CodeBlock, offset = 0): string {
  return `${block.file}:${block.line + offset}`;
}
