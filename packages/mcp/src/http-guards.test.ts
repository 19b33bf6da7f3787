import { describe, expect, it } from "vitest";
import { createHostCheck } from "./http-guards.js";

const request = (headers: { host?: string; origin?: string }): [string | undefined, string | undefined] => [headers.host, headers.origin];

describe("the Host and Origin check against DNS rebinding", () => {
  const check = createHostCheck("https://tools.example.com");

  it("accepts loopback names on any port and the public URL's host", () => {
    for (const host of ["localhost:4400", "127.0.0.1:1", "[::1]:4400", "localhost", "tools.example.com"]) {
      expect(check(...request({ host }))).toBeUndefined();
    }
    expect(check(...request({ host: "127.0.0.1:4400", origin: "http://localhost:6274" }))).toBeUndefined();
    expect(check(...request({ host: "127.0.0.1:4400", origin: "null" }))).toBeUndefined();
  });

  it("refuses any other Host, a missing one, and an Origin of another site", () => {
    expect(check(...request({ host: "evil.example.com" }))).toContain('Host "evil.example.com" is not this server');
    expect(check(...request({ host: "tools.example.com:8443" }))).toBeDefined();
    expect(check(...request({ host: "127.0.0.1.evil.example" }))).toBeDefined();
    expect(check(...request({}))).toBeDefined();
    expect(check(...request({ host: "localhost:4400", origin: "http://evil.example.com" }))).toContain('Origin "http://evil.example.com"');
    expect(check(...request({ host: "localhost:4400", origin: "not a url" }))).toBeDefined();
  });

  it("answers the same for a host it has seen before, past the hosts it remembers", () => {
    const remembering = createHostCheck("https://tools.example.com");
    for (let port = 1; port <= 300; port++) expect(remembering(...request({ host: `localhost:${port}` }))).toBeUndefined();
    for (let round = 0; round < 2; round++) {
      expect(remembering(...request({ host: "localhost:1" }))).toBeUndefined();
      expect(remembering(...request({ host: "localhost:300" }))).toBeUndefined();
      expect(remembering(...request({ host: "evil.example.com" }))).toContain('Host "evil.example.com" is not this server');
      expect(remembering(...request({ host: "localhost:1", origin: "http://evil.example.com" }))).toContain('Origin "http://evil.example.com"');
    }
  });

  it("without a public URL accepts loopback names only", () => {
    expect(createHostCheck(undefined)(...request({ host: "tools.example.com" }))).toBeDefined();
  });
});
