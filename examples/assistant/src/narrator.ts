/** How the session tells a person what happens: headings, labelled lines and tables, as plain text. */
export interface Narrator {
  /** A numbered step or a section. */
  heading(text: string): void;
  /** A labelled statement: `label: text`, continuation lines aligned under the text. */
  say(label: string, text: string): void;
  /** A plain line, indented under the current heading. */
  line(text: string): void;
  /** A table with a header row; cells are single-line text. */
  table(columns: readonly string[], rows: readonly (readonly string[])[]): void;
}

const INDENT = "   ";
const LABEL_WIDTH = 13;

/** A narrator writing lines of text (to a terminal, or to an array in tests). */
export function createTextNarrator(write: (line: string) => void): Narrator {
  return {
    heading(text) {
      write("");
      write(text);
    },
    say(label, text) {
      const [first = "", ...rest] = text.split("\n");
      write(`${INDENT}${`${label}:`.padEnd(LABEL_WIDTH)} ${first}`);
      for (const line of rest) write(`${INDENT}${" ".repeat(LABEL_WIDTH)} ${line}`);
    },
    line(text) {
      for (const line of text.split("\n")) write(`${INDENT}${line}`);
    },
    table(columns, rows) {
      for (const line of formatTable(columns, rows)) write(`${INDENT}${line}`);
    },
  };
}

/** A plain-text table: a header, a rule, and left-aligned columns as wide as their widest cell. */
export function formatTable(columns: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = columns.map((column, index) => Math.max(column.length, ...rows.map((row) => (row[index] ?? "").length)));
  const render = (cells: readonly string[]) =>
    widths
      .map((width, index) => (cells[index] ?? "").padEnd(width))
      .join("  ")
      .trimEnd();
  return [render(columns), widths.map((width) => "-".repeat(width)).join("  "), ...rows.map(render)];
}
