import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { upstreamEndpointOf } from "./upstream-endpoint.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-endpoint-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const of =
  (declaration: Parameters<typeof upstreamEndpointOf>[1], env: NodeJS.ProcessEnv = {}, section?: "process") =>
  () =>
    upstreamEndpointOf("mcp.files", declaration, { dir, env, ...(section === undefined ? {} : { section }) });

describe("upstreamEndpointOf", () => {
  it("gives a stdio child exactly env and the passEnv values the host has, in the plugin folder", () => {
    expect(of({ command: "srv", args: ["-v"], cwd: "work", env: { A: "1" }, passEnv: ["HOME", "ABSENT"] }, { HOME: "/home/x", SECRET: "s" })()).toEqual({
      kind: "stdio",
      command: "srv",
      args: ["-v"],
      cwd: path.join(dir, "work"),
      env: { A: "1", HOME: "/home/x" },
    });
  });

  it("refuses a working directory or token file outside the plugin folder, and toolpact's secrets by any route", () => {
    expect(of({ command: "srv", cwd: "../elsewhere" })).toThrow(/upstream "cwd" "..\/elsewhere" leaves the plugin folder/);
    expect(of({ url: "https://mcp.example.com/mcp", tokenFile: "../../etc/token" })).toThrow(/"tokenFile" "..\/..\/etc\/token" leaves the plugin folder/);
    for (const name of ["TOOLPACT_STORAGE_KEY", "TOOLPACT_SIGNING_KEYS_FILE", "TOOLPACT_DATABASE_URL"]) {
      expect(of({ command: "srv", passEnv: [name] }, { [name]: "x" })).toThrow(`"passEnv" names ${name}, one of toolpact's own secrets`);
      expect(of({ command: "srv", env: { [name]: "x" } })).toThrow(`"env" sets ${name}, the name of one of toolpact's own secrets`);
    }
    expect(of({ command: "srv", passEnv: ["TOOLPACT_ADMIN_KEY"] }, {}, "process")).toThrow(
      'plugin "mcp.files": process "passEnv" names TOOLPACT_ADMIN_KEY, one of toolpact\'s own secrets: no plugin may see it; remove it',
    );
    expect(of({ command: "srv", passEnv: ["TOOLPACT_ADMIN_KEY"] }, {}, "process")).toThrow(
      'plugin "mcp.files": process "passEnv" names TOOLPACT_ADMIN_KEY, one of toolpact\'s own secrets: no plugin may see it; remove it',
    );
  });

  it("never sends a token over plain http to another machine, and reads it from an owner-only file", () => {
    writeFileSync(path.join(dir, "token"), "t0ken\n", { mode: 0o600 });
    expect(of({ url: "http://mcp.example.com/mcp", tokenFile: "token" })).toThrow(/would send its token unencrypted to mcp\.example\.com/);
    expect(of({ url: "http://127.0.0.1:9/mcp", tokenFile: "token" })()).toMatchObject({ kind: "http", token: "t0ken" });
    expect(of({ url: "http://mcp.example.com/mcp" })()).toEqual({ kind: "http", url: new URL("http://mcp.example.com/mcp") });
    writeFileSync(path.join(dir, "open"), "t0ken", { mode: 0o604 });
    expect(of({ url: "https://mcp.example.com/mcp", tokenFile: "open" })).toThrow(/other users may read or change it \(mode 0604\): run chmod 600/);
    writeFileSync(path.join(dir, "empty"), "\n", { mode: 0o600 });
    expect(of({ url: "https://mcp.example.com/mcp", tokenFile: "empty" })).toThrow(/is empty: write the secret into it/);
    expect(of({ url: "https://mcp.example.com/mcp", tokenFile: "missing" })).toThrow(/cannot be read \(ENOENT\)/);
  });
});
