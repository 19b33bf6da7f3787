import { describe, expect, it } from "vitest";
import { actorTokenExpiry, watchExpiry } from "./actor-token-expiry.js";

const jwt = (payload: unknown) => `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.sig`;

describe("an actor token's expiry, read without verifying", () => {
  it("is exp in ms, from a payload in base64url (UTF-8 claims included)", () => {
    expect(actorTokenExpiry(jwt({ sub: "ädä", exp: 1_900_000_000 }))).toBe(1_900_000_000_000);
  });

  it("is undefined for a token that is not a JWT or names no numeric exp: then nothing is watched", () => {
    for (const token of ["opaque-token", "a..c", jwt({ exp: "soon" }), jwt(null), "a.!!!.c"]) {
      expect(actorTokenExpiry(token)).toBeUndefined();
      expect(watchExpiry(token, "req-1")).toBeUndefined();
    }
  });

  it("a watch aborts when the token expires", async () => {
    const watch = watchExpiry(jwt({ exp: Math.ceil(Date.now() / 1000) + 3 }), "req-1")!;
    expect(watch.signal.aborted).toBe(false);
    await new Promise((resolve) => watch.signal.addEventListener("abort", resolve));
    expect(watch.expired()).toMatchObject({ code: "UNAUTHENTICATED", data: { requestId: "req-1" } });
  }, 10_000);
});
