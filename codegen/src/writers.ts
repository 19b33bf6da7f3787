import type { CodeBlockWriter, WriterFunction } from "ts-morph";

/** One member of an object literal: `key: value`, or `...value` when the key is undefined. */
export type ObjectMember = readonly [key: string | undefined, value: string];

/** A multi-line object literal with trailing commas (ts-morph's `Writers.object` writes none). */
export function objectLiteral(members: readonly ObjectMember[]): WriterFunction {
  return (writer: CodeBlockWriter) => {
    if (members.length === 0) {
      writer.write("{}");
      return;
    }
    writer.write("{").newLine();
    writer.indent(() => {
      for (const [key, value] of members) writer.writeLine(key === undefined ? `...${value},` : `${key}: ${value},`);
    });
    writer.write("}");
  };
}
