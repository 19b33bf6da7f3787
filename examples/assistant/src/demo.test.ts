import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const demo = fileURLToPath(new URL("../dist/demo.js", import.meta.url));

describe("pnpm demo", () => {
  it("tells the whole story against a real `toolpact serve` child process and exits 0", async () => {
    expect(existsSync(demo), "run `pnpm build` first: the demo runs from examples/assistant/dist").toBe(true);
    const { stdout } = await promisify(execFile)(process.execPath, [demo], { timeout: 60_000 });
    expect(stdout).toMatch(/started:\s+toolpact serve at http:\/\/127\.0\.0\.1:\d+, on a fresh SQLite file .*toolpact\.db/);
    for (const step of [
      "1. Discover",
      "2. Search",
      "3. Create a note",
      "4. Email a summary",
      "5. Replay",
      "6. Change the input",
      "7. The activity log",
      "8. An AI agent over MCP",
    ]) {
      expect(stdout).toContain(step);
    }
    expect(stdout).toMatch(/refused:\s+CONFIRMATION_USED/);
    expect(stdout).toMatch(/refused:\s+CONFIRMATION_MISMATCH/);
    expect(stdout).toMatch(/elicitation:\s+the agent's client shows ada the link toolpact sent/);
    expect(stdout).toContain("revision 2026-07-28");
    expect(stdout).toMatch(/retry:\s+the client retries the same call with the bridge.s requestState/);
    expect(stdout).toMatch(/mailer:\s+outbox: 2 messages to ada@example.com/);
    expect(stdout).toContain("demo: every step behaved as expected");
  }, 90_000);
});
