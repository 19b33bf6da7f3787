import { describe, expect, it } from "vitest";
import { presenceFromClaims } from "./presence-token.js";

const now = 1_800_000_000_000;
const claims = (extra: Record<string, unknown> = {}) => ({ sub: "ada", tid: "t1", jti: "jti-0123456789", iat: now / 1000, exp: now / 1000 + 120, ...extra });

describe("presence token claims", () => {
  it("name the person, and with `cfr` the one confirmation request the sign-in is for", () => {
    expect(presenceFromClaims(claims(), now)).toEqual({ tenantId: "t1", userId: "ada", tokenId: "jti-0123456789", expiresAt: now + 120_000 });
    expect(presenceFromClaims(claims({ cfr: "0193a0c2-aaaa-7bbb-8ccc-000000000001" }), now).requestId).toBe("0193a0c2-aaaa-7bbb-8ccc-000000000001");
  });

  it("refuse a `cfr` that is not a request id", () => {
    for (const cfr of [42, "", "a b", "x".repeat(129), "a\u0000b", null, ["id"]]) {
      expect(() => presenceFromClaims(claims({ cfr }), now), JSON.stringify(cfr)).toThrow(/`cfr` claim must be the id of one confirmation request/);
    }
  });
});
