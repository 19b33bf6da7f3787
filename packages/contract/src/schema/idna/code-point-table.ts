/** A Unicode property as sorted runs over every code point, looked up by binary search. */

/** One property's value for every code point, decoded once from the run format of tables.ts. */
export class CodePointTable {
  private constructor(
    private readonly starts: Uint32Array,
    private readonly values: string,
  ) {}

  /** Decodes runs: each a base-32 distance from the previous run's start, then the run's value letter. */
  static decode(encoded: string): CodePointTable {
    const starts: number[] = [];
    let values = "";
    let start = 0;
    let digits = 0;
    for (let index = 0; index < encoded.length; index++) {
      const code = encoded.charCodeAt(index);
      if (code >= 0x41 && code <= 0x5a) {
        start += Number.parseInt(encoded.slice(index - digits, index), 32);
        starts.push(start);
        values += encoded[index];
        digits = 0;
      } else {
        digits++;
      }
    }
    return new CodePointTable(Uint32Array.from(starts), values);
  }

  /** The value letter of `codePoint`. */
  get(codePoint: number): string {
    const { starts } = this;
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (starts[middle]! <= codePoint) low = middle;
      else high = middle - 1;
    }
    return this.values[low]!;
  }
}
