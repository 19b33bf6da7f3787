import { describe, expect, it } from "vitest";
import { around, compose, type Next } from "./compose.js";

type Trail = string[];

describe("compose", () => {
  it("runs the steps top to bottom and hands each the answer of the rest", async () => {
    const outer = async (trail: Trail, next: Next<Trail, string>) => {
      trail.push("outer in");
      const answer = await next(trail);
      trail.push("outer out");
      return `outer(${answer})`;
    };
    const inner = (trail: Trail, next: Next<Trail, string>) => {
      trail.push("inner");
      return next(trail);
    };
    const last = async (trail: Trail) => {
      trail.push("last");
      return "answer";
    };
    const trail: Trail = [];
    expect(await compose<Trail, string>([outer, inner, last])(trail)).toBe("outer(answer)");
    expect(trail).toEqual(["outer in", "inner", "last", "outer out"]);
  });

  it("stops at a step that answers or refuses itself", async () => {
    const trail: Trail = [];
    const refuse = () => {
      throw new Error("refused here");
    };
    const never = async (t: Trail) => {
      t.push("never");
      return "x";
    };
    await expect(compose<Trail, string>([(t, next) => next(t), refuse, never])(trail)).rejects.toThrow("refused here");
    expect(trail).toEqual([]);
    expect(await compose<Trail, string>([async () => "early", never])(trail)).toBe("early");
    expect(trail).toEqual([]);
  });

  it("refuses a second next() from one step, and next() from the last step", async () => {
    const twice = async function twice(trail: Trail, next: Next<Trail, string>) {
      await next(trail);
      return next(trail);
    };
    await expect(compose<Trail, string>([twice, async () => "x"])([])).rejects.toThrow("twice called next() twice");
    const greedy = function greedy(trail: Trail, next: Next<Trail, string>) {
      return next(trail);
    };
    await expect(compose<Trail, string>([greedy])([])).rejects.toThrow("greedy called next(), but it is the last step of its chain");
  });

  it("lets a boundary turn what the steps after it answer into its own answer, handing on once", async () => {
    const effect = compose<Trail, number>([async (t) => (t.push("effect"), 41)]);
    const ledger = async function ledger(trail: Trail, next: Next<Trail, number>) {
      trail.push("begin");
      const outcome = await next(trail);
      trail.push("settle");
      return `settled ${outcome + 1}`;
    };
    const trail: Trail = [];
    expect(await compose<Trail, string>([(t, next) => next(t), around(ledger, effect)])(trail)).toBe("settled 42");
    expect(trail).toEqual(["begin", "effect", "settle"]);
    const again = async function again(trail: Trail, next: Next<Trail, number>) {
      await next(trail);
      return String(await next(trail));
    };
    await expect(compose<Trail, string>([around(again, effect)])([])).rejects.toThrow("again called next() twice");
  });
});
