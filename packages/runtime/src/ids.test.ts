import { describe, expect, it } from "vitest";
import { uuidv7, uuidv7Floor } from "./ids.js";

describe("uuidv7", () => {
  it("makes version-7 ids that sort by creation, also within one millisecond", () => {
    const now = Date.now();
    const ids = Array.from({ length: 5000 }, () => uuidv7(now));
    expect(ids.every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(parseInt(ids[0]!.replace("-", "").slice(0, 12), 16)).toBe(now);
  });

  it("has a floor below every id of a later millisecond", () => {
    const at = Date.now() + 60_000;
    expect(uuidv7Floor(at) <= uuidv7(at)).toBe(true);
    expect(uuidv7Floor(at + 1) > uuidv7(at - 5_000)).toBe(true);
  });
});
