/** The IDNA tables, decoded on first use (most processes never check an internationalized name). */
import { CodePointTable } from "./code-point-table.js";
import { BIDI_CLASS, DERIVED_PROPERTY, JOINING_TYPE, VIRAMA } from "./tables.js";

/** The decoded tables of tables.ts. */
export interface IdnaTables {
  /** RFC 5892's derived property value: P PVALID, J CONTEXTJ, O CONTEXTO, D DISALLOWED, U UNASSIGNED. */
  readonly derived: CodePointTable;
  /** Bidi_Class: L, R, A (AL), N (AN), E (EN), S (ES), C (CS), T (ET), O (ON), B (BN), M (NSM), X other. */
  readonly bidi: CodePointTable;
  /** Joining_Type: D, L, R, T, or U. */
  readonly joining: CodePointTable;
  /** V where Canonical_Combining_Class is Virama. */
  readonly virama: CodePointTable;
}

let tables: IdnaTables | undefined;

/** The tables, decoded once. */
export function idnaTables(): IdnaTables {
  tables ??= {
    derived: CodePointTable.decode(DERIVED_PROPERTY),
    bidi: CodePointTable.decode(BIDI_CLASS),
    joining: CodePointTable.decode(JOINING_TYPE),
    virama: CodePointTable.decode(VIRAMA),
  };
  return tables;
}
