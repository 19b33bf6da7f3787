import { CodeBlockWriter, printStructure, type InterfaceDeclarationStructure, type WriterFunction } from "ts-morph";
import { PRINT_OPTIONS, type PrintedStatements } from "./emit.js";

/**
 * A statement every tool has alike but for its names and values (its descriptor, its `<Tool>Methods`),
 * printed once per shape with stand-ins that each tool's values then replace in one pass. ts-morph's
 * writer reads every character it prints, so printing it per tool costs many times the fill; and a
 * tool's values are never scanned again, whatever they contain. Each stand-in prints verbatim and
 * appears nowhere else in the template; each value is one line that the writer would print as it
 * is (an identifier, a JSON literal, a full name, which the manifest rules limit to `[a-z0-9.:@-]`,
 * in a comment).
 */
export class StatementTemplate<TKey extends string> {
  readonly #keys: ReadonlyMap<string, TKey>;
  readonly #pattern: RegExp;
  /** Each shape's printed text split at its stand-ins, each replaced by its key: text, key, text, ..., text. */
  readonly #printed = new Map<string, readonly string[]>();

  /** @param standIns Each key's stand-in, as the structures of the template spell it. */
  constructor(readonly standIns: Readonly<Record<TKey, string>>) {
    this.#keys = new Map(Object.entries<string>(standIns).map(([key, standIn]) => [standIn, key as TKey]));
    // Longest first, so that no stand-in is cut short by another that begins it; captured, so `split` keeps it.
    const texts = [...this.#keys.keys()].sort((a, b) => b.length - a.length);
    this.#pattern = new RegExp(`(${texts.map((text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})`);
  }

  /** The statement of `shape` (printed from `structure()` the first time) with `values` in place of the stand-ins. */
  fill(shape: string, structure: () => InterfaceDeclarationStructure | WriterFunction, values: Readonly<Record<TKey, string>>): PrintedStatements {
    let parts = this.#printed.get(shape);
    if (parts === undefined) {
      parts = print(structure())
        .trimEnd()
        .split(this.#pattern)
        .map((part, index) => (index % 2 === 0 ? part : this.#keys.get(part)!));
      this.#printed.set(shape, parts);
    }
    let code = parts[0]!;
    for (let index = 1; index < parts.length; index += 2) code += values[parts[index] as TKey] + parts[index + 1]!;
    return { kind: "printed", code };
  }
}

function print(structure: InterfaceDeclarationStructure | WriterFunction): string {
  if (typeof structure !== "function") return printStructure(structure, PRINT_OPTIONS);
  const writer = new CodeBlockWriter(PRINT_OPTIONS);
  structure(writer);
  return writer.toString();
}
