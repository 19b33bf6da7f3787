import { describe, expect, it } from "vitest";
import { CHAINED_COLUMNS, UNLINKED_SELECT, unlinkedFromValues } from "../store/chain-rows.js";
import { activityFromRow, type Row } from "../store/rows.js";
import { CHAINED_FIELDS, canonicalEvent, canonicalValues, contentLinkHash, linkHash } from "./chain-hash.js";

const snake = (field: string) => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** A row of every chained column, as SQLite answers it (numbers as numbers) or as PostgreSQL does (bigint as text). */
function row(driver: "sqlite" | "postgres", filled: boolean): Row {
  const at = Date.UTC(2026, 11, 5, 12, 30, 15, 123);
  const values: Row = Object.fromEntries(CHAINED_COLUMNS.map((column) => [column, filled ? `${column}: "quoted" ü \u2028` : null]));
  return {
    ...values,
    tenant_id: "acme",
    id: "01930000-0000-7000-8000-000000000001",
    at: driver === "postgres" ? String(at) : at,
    kind: "execute",
    phase: "settled",
    outcome: "succeeded",
    version: filled ? 3 : null,
    duration_ms: filled ? 12.375 : null,
  };
}

describe("the checkpointer's lean read hashes what verification hashes", () => {
  it("selects the chained fields' columns in their order, then the event's own chain position", () => {
    expect(CHAINED_COLUMNS).toEqual(CHAINED_FIELDS.map(snake));
    expect(UNLINKED_SELECT).toBe(`${CHAINED_COLUMNS.join(", ")}, chain_seq`);
  });

  for (const driver of ["sqlite", "postgres"] as const) {
    for (const filled of [true, false]) {
      it(`gives canonicalEvent's content for a ${driver} row with ${filled ? "every field set" : "only the required fields"}`, () => {
        const source = row(driver, filled);
        const values = CHAINED_COLUMNS.map((column) => source[column]);
        const event = activityFromRow(source);
        expect(canonicalValues(values)).toBe(canonicalEvent(event));
        const previous = "ab".repeat(32);
        expect(contentLinkHash(previous, canonicalValues(values))).toBe(linkHash(previous, event));
      });
    }
  }

  it("passes an event whose own chain column is empty, and no other", () => {
    const values = CHAINED_COLUMNS.map((column) => row("sqlite", true)[column]);
    expect(unlinkedFromValues([...values, null])).toEqual({ id: "01930000-0000-7000-8000-000000000001", values });
    expect(unlinkedFromValues([...values, 4])).toBeUndefined();
  });

  it("links with SHA-256 over the previous link, a newline and the content", async () => {
    const { createHash } = await import("node:crypto");
    const content = canonicalValues(CHAINED_COLUMNS.map((column) => row("postgres", true)[column]));
    expect(contentLinkHash("p", content)).toBe(createHash("sha256").update(`p\n${content}`).digest("hex"));
  });
});
