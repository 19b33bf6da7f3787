import { spawn, execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "./demo-world.js";
import type { StartSession } from "./start-session.js";

const dist = fileURLToPath(new URL("../dist/", import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), "toolpact-start-"));
const env = { ...process.env, EXAMPLES_START_DIR: dir };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("pnpm start and the token script", () => {
  it("serves the examples, prints how to act as a user, mints working tokens, and stops cleanly on SIGTERM", async () => {
    expect(existsSync(path.join(dist, "start.js")), "run `pnpm build` first").toBe(true);
    const port = await freePort();
    const child = spawn(process.execPath, [path.join(dist, "start.js")], { env: { ...env, PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"] });
    let printed = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (printed += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (printed += chunk));
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    try {
      await expect.poll(() => printed, { timeout: 30_000, interval: 100 }).toContain("Stop with Ctrl-C.");
      const url = `http://127.0.0.1:${port}`;
      expect(printed).toContain(`toolpact is serving the example plugins at ${url}`);
      expect(printed).toContain("pnpm --silent --filter @toolpact/example-assistant token --presence --user ada");

      const session = JSON.parse(readFileSync(path.join(dir, "session.json"), "utf8")) as StartSession;
      const token = (args: string[]) => promisify(execFile)(process.execPath, [path.join(dist, "token.js"), ...args], { env });
      const actorToken = (await token(["--user", "ada"])).stdout.trim();
      const listed = await fetch(`${url}/trpc/tools.list`, {
        headers: { authorization: `Bearer ${session.assistantPluginKey}`, "x-toolpact-actor": actorToken },
      });
      expect(listed.status).toBe(200);
      expect(((await listed.json()) as { result: { data: unknown[] } }).result.data).toHaveLength(4);

      const presence = (await token(["--presence", "--user", "ada"])).stdout.trim();
      const signIn = await fetch(`${url}/confirm/session?token=${presence}`, { redirect: "manual" });
      expect(signIn.status).toBe(200);
      expect(signIn.headers.getSetCookie()[0]).toMatch(/HttpOnly/);
      await expect(token(["--level", "7"])).rejects.toMatchObject({ code: 2 });
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    expect(printed).toContain("toolpact serve stopped (exit code 0)");
  }, 60_000);
});
