/**
 * Steps are named, never numbered: a number goes stale the day a step is added (docs/architecture.md once
 * had two rows 8 and four rows 10). Checks the runtime's sources and tests, and the architecture doc.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const HERE = fileURLToPath(import.meta.url);
const SRC = resolve(dirname(HERE), "..");
const ARCHITECTURE = resolve(SRC, "../../../docs/architecture.md");
const NUMBERED = /\bsteps? \d|\bstep-\d|^\| \d+(, \d+)? \|/im;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

describe("step names", () => {
  it("no step of the call path is referred to by number", () => {
    // This file aside: its control cases are numbered on purpose.
    const sources = files(SRC).filter((file) => file !== HERE);
    const checked = [...sources, ARCHITECTURE];
    expect(checked.length).toBeGreaterThan(40);
    const numbered = checked.filter((file) => NUMBERED.test(readFileSync(file, "utf8")));
    expect(numbered).toEqual([]);
  });

  it("the check finds a numbered step (control)", () => {
    expect(["runs steps 2-7 again", "the step-9 transaction", "| 10 | `keep-result` |", "Step 8, first half"].every((text) => NUMBERED.test(text))).toBe(true);
    expect(NUMBERED.test("the authorization steps, then replay-idempotent")).toBe(false);
  });
});
