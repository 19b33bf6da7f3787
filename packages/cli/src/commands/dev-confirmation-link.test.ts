/**
 * The confirmation links `toolpact dev` prints (the real binary): each signs in for its own request only,
 * and the plain address a caller prints, opened without a sign-in, says which link to open.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startCli, trpc } from "../cli-test-helpers.js";

const work = mkdtempSync(path.join(tmpdir(), "toolpact-dev-link-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const PROVIDER = "com.example.notes";
const CALLER = "com.example.assistant";

/** A provider in plain JavaScript (no build) with one write tool, and a caller that is a manifest only. */
function writeProject(root: string): void {
  const object = (properties: object, required: string[] = []) => ({ type: "object", properties, required, additionalProperties: false });
  const manifest = {
    id: PROVIDER,
    version: "1.0.0",
    permissions: ["tools:provide"],
    tools: [{ name: "add", effect: "write", inputSchema: object({ text: { type: "string" } }, ["text"]) }],
  };
  mkdirSync(path.join(root, "notes"), { recursive: true });
  mkdirSync(path.join(root, "caller"), { recursive: true });
  writeFileSync(path.join(root, "notes/plugin.json"), JSON.stringify(manifest));
  writeFileSync(path.join(root, "notes/package.json"), JSON.stringify({ name: "notes", type: "module", main: "index.js" }));
  writeFileSync(
    path.join(root, "notes/index.js"),
    'export function activate(sdk) { sdk.tools.provide("add", { preview: (input) => ({ summary: `Add "${input.text}"` }), execute: () => ({ ok: true }) }); }\n',
  );
  writeFileSync(path.join(root, "caller/plugin.json"), JSON.stringify({ id: CALLER, version: "1.0.0", permissions: ["tools:call"], uses: [`${PROVIDER}:*`] }));
}

const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("TOOLPACT_") && !name.startsWith("npm_")));

/** Signs in with a printed link as a browser opened from a terminal would (Sec-Fetch-Site: none); the session cookie. */
async function openLink(link: string): Promise<string> {
  const response = await fetch(link, { headers: { "sec-fetch-site": "none", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" } });
  const cookie = response.headers.get("set-cookie")?.split(";")[0];
  if (cookie === undefined) throw new Error(`sign-in failed: HTTP ${response.status} ${await response.text()}`);
  return cookie;
}

describe("toolpact dev's confirmation links", () => {
  it("bind each sign-in to its request: the link for A cannot show or approve B; the caller's plain link says which to open", async () => {
    const root = path.join(work, "project");
    writeProject(root);
    const dev = startCli(["dev", "notes", "caller", "--port", "0", "--user", "ada"], { cwd: root, env });
    try {
      const url = (await dev.waitFor(/^toolpact dev: serving 2 plugins at (http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
      const [, pluginKey, actorToken] = (await dev.waitFor(/^ {2}export TOOLPACT_URL=\S+ PLUGIN_KEY=(\S+) ACTOR_TOKEN=(\S+)$/m))!;
      const headers = { authorization: `Bearer ${pluginKey}`, "x-toolpact-actor": actorToken! };
      const ask = async (text: string) => {
        const from = dev.output().length;
        const preview = await trpc(url, "tools.preview", { ref: { providerId: PROVIDER, tool: "add" }, input: { text } }, { headers });
        const { requestId, confirmUrl } = (preview.data as { confirmation: { requestId: string; confirmUrl: string } }).confirmation;
        const link = (await dev.waitFor(/^confirm com\.example\.notes:add for user "ada": open (\S+)$/m, { from }))[1]!;
        return { requestId, confirmUrl, link };
      };
      const a = await ask("first");
      const b = await ask("second");

      // The caller's own link, opened without a sign-in, points at the one that works.
      const plain = await fetch(b.confirmUrl);
      expect(plain.status).toBe(401);
      const explained = await plain.text();
      expect(explained).toContain("toolpact dev printed a sign-in link for this request in its terminal");
      expect(explained).not.toContain("token=ey"); // it names the line, never a token

      const cookie = await openLink(a.link);
      const pageA = await fetch(a.confirmUrl, { headers: { cookie } });
      const csrf = /name="csrf" value="([^"]+)"/.exec(await pageA.text())?.[1];
      expect(csrf).toBeDefined();
      const pageB = await fetch(b.confirmUrl, { headers: { cookie } });
      expect(pageB.status).toBe(403);
      const post = (target: string) =>
        fetch(`${target}/approve`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", cookie, "sec-fetch-site": "same-origin", origin: url },
          body: new URLSearchParams({ csrf: csrf! }).toString(),
        });
      const refused = await post(b.confirmUrl);
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain(`this sign-in is for confirmation request &quot;${a.requestId}&quot; only`);
      expect((await post(a.confirmUrl)).status).toBe(200);

      const statusOf = async (requestId: string) =>
        ((await trpc(url, "confirmations.get", { requestId }, { headers, query: true })).data as { status: string }).status;
      expect(await statusOf(a.requestId)).toBe("approved");
      expect(await statusOf(b.requestId)).toBe("pending");
      // B's own link still works for B.
      const cookieB = await openLink(b.link);
      expect((await fetch(b.confirmUrl, { headers: { cookie: cookieB } })).status).toBe(200);
    } finally {
      dev.child.kill("SIGINT");
      await dev.exited;
    }
  }, 120_000);
});
