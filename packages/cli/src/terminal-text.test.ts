import { createServer, type Server } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runMain, preloadCommands } from "./cli-test-helpers.js";
import { terminalText } from "./terminal-text.js";

beforeAll(() => preloadCommands("codegen"), 180_000);

/** What a hostile server puts in its answers: a title change, a screen clear, colour, and a right-to-left override. */
const HOSTILE = "\u001b]0;pwned\u0007\u001b[2J\u001b[31mred\u009b1m \u202Egnp.exe\u2066x\u2069 \r\u0000\u200B";

describe("terminalText", () => {
  it("shows escape sequences, other controls and bidi or zero-width characters as visible escapes; keeps tab and line feed", () => {
    expect(terminalText(HOSTILE)).toBe("\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{1b}[31mred\\u{9b}1m \\u{202e}gnp.exe\\u{2066}x\\u{2069} \\u{d}\\u{0}\\u{200b}");
    expect(terminalText("line one\n\tline two: ünïcödé, 名前, emoji 🙂")).toBe("line one\n\tline two: ünïcödé, 名前, emoji 🙂");
    expect(terminalText("npm output\r\nnext line\rover")).toBe("npm output\nnext line\\u{d}over");
  });
});

describe("codegen --from prints nothing a server sends raw", () => {
  let server: Server;
  let url: string;
  let answer: { status: number; body: unknown };
  let work: string;
  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), "toolpact-terminal-text-"));
    server = createServer((_request, response) => {
      response.writeHead(answer.status, { "content-type": "application/json" });
      response.end(JSON.stringify(answer.body));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(work, { recursive: true, force: true });
  });
  const env = { PATH: process.env.PATH, TOOLPACT_PLUGIN_KEY: "tpk_test", TOOLPACT_ACTOR_TOKEN: "ey.test" };
  const assertEscaped = (output: string) => {
    expect(output).not.toMatch(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u200B\u202A-\u202E\u2066-\u2069]/);
    expect(output).toContain("\\u{1b}[2J");
    expect(output).toContain("\\u{202e}");
  };

  it("an error message", async () => {
    answer = { status: 401, body: { error: { message: `bad key ${HOSTILE}`, data: { toolpactCode: `UNAUTHENTICATED${HOSTILE}` } } } };
    const run = await runMain(["codegen", "--out", "gen", "--from", url], { cwd: work, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^toolpact codegen: http:\/\/127\.0\.0\.1:\d+ refused tools\.manifests: UNAUTHENTICATED\\u\{1b\}\]0;pwned/);
    assertEscaped(run.stderr);
  });

  it("a manifest's ids, keys and values in its diagnostics", async () => {
    const bad = {
      id: `com.example.x${HOSTILE}`,
      version: "1.0.0",
      permissions: ["tools:provide"],
      [`colour${HOSTILE}`]: HOSTILE,
      tools: [{ name: "t", effect: HOSTILE, inputSchema: { type: "object" } }],
    };
    answer = { status: 200, body: { result: { data: [bad] } } };
    const run = await runMain(["codegen", "--out", "gen", "--from", url], { cwd: work, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("1 of 1 manifest is invalid; nothing was written");
    assertEscaped(run.stdout + run.stderr);
  });
});
