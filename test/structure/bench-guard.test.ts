/**
 * The bench's regression guard (`node bench/run.mjs --smoke --check`, bench/lib/guard.mjs) fails a change
 * that doubles a call's cost and passes the code as it is: its comparison with the figures docs/benchmarks.md
 * documents, and one real measurement of the in-process guard (the fastest to measure): the call as it is
 * and the call made twice, in the same rounds. It measures latency, so it runs alone (vitest's "quiet" project).
 */
import { describe, expect, it } from "vitest";
import { GUARDS, GUARD_SLACK, compareGuards, documentedRatios, guardTable, readDocumentedRatios } from "../../bench/lib/guard.mjs";
import { pairedRatios } from "../../bench/lib/rounds.mjs";
import { SMOKE_CHECK_SETTINGS } from "../../bench/overhead/check.mjs";
import { SYSTEMS, measureSystems } from "../../bench/overhead/run.mjs";

const keys = GUARDS.map((guard) => guard.key);
const everywhere = (value: number) => new Map(keys.map((key) => [key, value]));

describe("the bench's regression guard", () => {
  it("reads a figure for every guard from docs/benchmarks.md, the figures' one home, in the form --write renders", async () => {
    const documented = await readDocumentedRatios();
    expect([...documented.keys()].sort()).toEqual([...keys].sort());
    for (const value of documented.values()) expect(value).toBeGreaterThan(0);
    const rendered = new Map(keys.map((key, i) => [key, 1.25 + i]));
    expect(documentedRatios(`# page\n\n${guardTable(rendered)}\n\nmore text\n`)).toEqual(rendered);
  });

  it(`fails only beyond ${GUARD_SLACK}x of the documented figure, naming the row, the ratio, the figure and the limit`, () => {
    const documented = everywhere(2);
    expect(compareGuards(everywhere(2 * GUARD_SLACK), documented).map((verdict) => verdict.failed)).toEqual(keys.map(() => false));
    const doubled = compareGuards(everywhere(4), documented);
    expect(doubled.map((verdict) => verdict.failed)).toEqual(keys.map(() => true));
    expect(doubled[0]?.message).toMatchInlineSnapshot(
      `"guard "read-http-p50" (read execute over HTTP: p50 ÷ bare tRPC's on the same HTTP client): measured 4.000x, documented 2.000x, limit 3.000x (1.5x the documented figure): a call got slower; profile it (bench/profile/) before it lands"`,
    );
  });

  it("fails a guard the page documents no figure for, or that nothing measured", () => {
    const [missing, unmeasured] = compareGuards(new Map([[keys[1], Number.NaN]]), new Map([[keys[1], 2]]));
    expect(missing?.failed).toBe(true);
    expect(missing?.message).toContain("documents no figure");
    expect(unmeasured?.failed).toBe(true);
    expect(unmeasured?.message).toContain("nothing was measured");
  });

  it("measured in process: passes runtime.execute as it is, and fails it when every call is made twice", { timeout: 120_000 }, async () => {
    const guard = GUARDS.find((each) => each.key === "in-process-p50")!;
    const system = (name: string) => SYSTEMS.find((each) => each.name === name)!;
    // The call as it is and the call made twice, in the same interleaved rounds against the same base.
    const results = await measureSystems(
      [system(guard.base), system(guard.subject), { ...system(guard.subject), name: "doubled" }],
      SMOKE_CHECK_SETTINGS,
      () => {},
      { doubled: ["doubled"] },
    );
    const asItIs = pairedRatios(results.get(guard.subject), results.get(guard.base)).p50;
    const doubled = pairedRatios(results.get("doubled"), results.get(guard.base)).p50;
    const documented = await readDocumentedRatios();
    const [passes] = compareGuards(new Map([[guard.key, asItIs]]), documented, [guard]);
    const [fails] = compareGuards(new Map([[guard.key, doubled]]), documented, [guard]);
    expect(passes?.failed, passes?.message).toBe(false);
    expect(fails?.failed, fails?.message).toBe(true);
    expect(doubled / asItIs).toBeGreaterThan(GUARD_SLACK);
  });
});
