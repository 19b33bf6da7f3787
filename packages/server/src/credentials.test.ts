import { describe, expect, it } from "vitest";
import { bearerToken, createAdminKeyCheck, credentialsOf } from "./credentials.js";

describe("bearerToken", () => {
  it("reads the token of a Bearer header and nothing else", () => {
    expect(bearerToken("Bearer tpk_abc")).toBe("tpk_abc");
    expect(bearerToken("bearer   tpk_abc ")).toBe("tpk_abc");
    expect(bearerToken("Basic dXNlcjpwYXNz")).toBeUndefined();
    expect(bearerToken("Bearer")).toBeUndefined();
    expect(bearerToken("Bearer a b")).toBeUndefined();
    expect(bearerToken("tpk_abc")).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});

describe("credentialsOf", () => {
  it("takes the plugin key from Authorization and the actor token from X-Toolpact-Actor only", () => {
    expect(credentialsOf({ authorization: "Bearer k", "x-toolpact-actor": "jwt" })).toEqual({ pluginKey: "k", actorToken: "jwt", via: "http" });
    expect(credentialsOf({ "x-toolpact-actor": "" })).toEqual({ pluginKey: undefined, actorToken: undefined, via: "http" });
  });

  it("labels a request http unless it says X-Toolpact-Via: mcp (any other value is http)", () => {
    expect(credentialsOf({ "x-toolpact-via": "mcp" }).via).toBe("mcp");
    expect(credentialsOf({ "x-toolpact-via": "in-process" }).via).toBe("http");
    expect(credentialsOf({ "x-toolpact-via": ["mcp", "mcp"] as unknown as string }).via).toBe("http");
  });
});

describe("createAdminKeyCheck", () => {
  const adminKey = "a".repeat(20) + "-admin-key-0123456789";
  const check = createAdminKeyCheck(adminKey);

  it("accepts exactly the configured key", () => {
    expect(check(adminKey)).toBe(true);
  });

  it("refuses a missing key, a prefix, an extension, a case change and an empty string", () => {
    for (const presented of [undefined, "", adminKey.slice(0, -1), adminKey + "x", adminKey.toUpperCase(), " " + adminKey]) {
      expect(check(presented)).toBe(false);
    }
  });

  it("refuses everything when no admin key is configured", () => {
    expect(createAdminKeyCheck(undefined)("")).toBe(false);
    expect(createAdminKeyCheck("")("")).toBe(false);
    expect(createAdminKeyCheck(undefined)("anything")).toBe(false);
  });
});
