import { describe, expect, it } from "vitest";
import {
  confirmationOriginOf,
  isServedAtConfirmationOrigin,
  mayDecideHere,
  parseConfirmationOrigin,
  requireConfirmationOrigin,
} from "./confirmation-origin.js";

const refusal = (run: () => void): string => {
  try {
    run();
  } catch (error) {
    return (error as { code?: string }).code ?? "thrown";
  }
  return "accepted";
};

describe("the confirmation page's origin rule", () => {
  it("a server of its own decides wherever it is reached; a mount without confirmationOrigin never decides", () => {
    const own = confirmationOriginOf(undefined, false);
    expect(refusal(() => requireConfirmationOrigin(own, { host: "anything:1", origin: "http://anything:1", "sec-fetch-site": "same-origin" }))).toBe(
      "accepted",
    );
    expect(mayDecideHere(own)).toBe(true);
    const shared = confirmationOriginOf(undefined, true);
    expect(mayDecideHere(shared)).toBe(false);
    expect(refusal(() => requireConfirmationOrigin(shared, { host: "app.example", origin: "https://app.example", "sec-fetch-site": "same-origin" }))).toBe(
      "PERMISSION_DENIED",
    );
  });

  it("with confirmationOrigin: only that host, same-origin fetch metadata and that Origin", () => {
    const rule = confirmationOriginOf("https://confirm.example", true);
    const ok = { host: "confirm.example", origin: "https://confirm.example", "sec-fetch-site": "same-origin" };
    expect(refusal(() => requireConfirmationOrigin(rule, ok))).toBe("accepted");
    expect(refusal(() => requireConfirmationOrigin(rule, { host: "confirm.example" }))).toBe("accepted"); // no browser headers: not a script
    for (const wrong of [
      { ...ok, host: "app.example" },
      { ...ok, "sec-fetch-site": "same-site" },
      { ...ok, "sec-fetch-site": "cross-site" },
      { ...ok, "sec-fetch-site": "none" },
      { ...ok, origin: "https://app.example" },
      { ...ok, origin: "http://confirm.example" },
      { ...ok, origin: "null" },
    ]) {
      expect(
        refusal(() => requireConfirmationOrigin(rule, wrong)),
        JSON.stringify(wrong),
      ).toBe("PERMISSION_DENIED");
    }
    expect(isServedAtConfirmationOrigin(rule, { host: "confirm.example" })).toBe(true);
    expect(isServedAtConfirmationOrigin(rule, { host: "app.example" })).toBe(false);
    expect(isServedAtConfirmationOrigin(rule, {})).toBe(false);
  });

  it("accepts an origin only: scheme, host and port", () => {
    expect(parseConfirmationOrigin("https://confirm.example").host).toBe("confirm.example");
    expect(parseConfirmationOrigin("http://localhost:4400/").host).toBe("localhost:4400");
    for (const bad of [
      "confirm.example",
      "https://confirm.example/toolpact",
      "https://confirm.example?x=1",
      "ftp://confirm.example",
      "https://user@confirm.example",
    ]) {
      expect(() => parseConfirmationOrigin(bad), bad).toThrow(TypeError);
    }
  });
});
