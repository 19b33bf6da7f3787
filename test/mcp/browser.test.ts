/**
 * An MCP agent's confirmed call, decided by a person in headless Chromium (playwright-core, Debian's
 * /usr/bin/chromium): the SDK client receives the URL elicitation and opens the link as a client would;
 * the person signs in through the identity service's link and clicks on toolpact's real page.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext, Page } from "playwright-core";
import type { ElicitRequestURLParams } from "@modelcontextprotocol/sdk/types.js";
import { CHROMIUM, launchChromium } from "../integration/support/deps.js";
import { mintPresenceToken } from "../integration/support/tokens.js";
import { startMcpWorld, textOf, type McpWorld } from "./support/mcp-world.js";

const SKIP = !existsSync(CHROMIUM) && process.env.CI !== "true";

if (SKIP) {
  describe("MCP confirmations in headless Chromium", () => {
    it.skip("skipped: /usr/bin/chromium is missing (install Debian's chromium; with CI=true this test fails instead)", () => {});
  });
} else {
  describe("MCP confirmations in headless Chromium", () => {
    let world: McpWorld;
    let browser: BrowserContext;
    let clockOffset = 0;

    beforeAll(async () => {
      world = await startMcpWorld({ clock: () => Date.now() + clockOffset });
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
      await world?.close();
    });

    /**
     * What an MCP client does with a URL elicitation, with the person in the loop: the link opens in the
     * browser, where the identity service (http://identity.example, served by the browser's routing)
     * signs the person in with a presence token and leads on to the request's page.
     */
    async function openInBrowser(params: ElicitRequestURLParams): Promise<Page> {
      const page = await browser.newPage();
      const token = await mintPresenceToken(world.secrets.actorSecret);
      const signIn = `${world.stack.url}/confirm/session?token=${encodeURIComponent(token)}&next=${encodeURIComponent(new URL(params.url).pathname)}`;
      await page.route("http://identity.example/**", (route) =>
        route.fulfill({ status: 200, contentType: "text/html", body: `<a id="continue" href="${signIn.replaceAll("&", "&amp;")}">Continue</a>` }),
      );
      await page.goto("http://identity.example/confirm-for-toolpact");
      await page.click("#continue");
      // A sign-in link followed from another site signs in only after a same-site step on toolpact's page.
      await page.waitForSelector('form[action="session"] #continue');
      await page.click('form[action="session"] #continue');
      await page.waitForURL(params.url);
      await page.waitForSelector("#summary, #message");
      return page;
    }

    /** A client whose user opens every confirmation link in the browser; `pages` get each opened page. */
    async function agentWithBrowser() {
      const pages: Promise<Page>[] = [];
      const client = await world.connect({
        onUrlElicitation: (params) => {
          const opening = openInBrowser(params);
          opening.catch(() => {});
          pages.push(opening);
          return { action: "accept" };
        },
      });
      return { client, pages };
    }

    const created = () => world.stack.probe.invocations.get("create-note") ?? 0;

    it("Approve in the browser: the agent's call runs once and returns the result", async () => {
      const { client, pages } = await agentWithBrowser();
      const before = created();
      const calling = client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Approved in Chromium over MCP" } });
      await expect.poll(() => pages.length).toBe(1);
      const page = await pages[0]!;
      expect(await page.textContent("#summary")).toBe('Create note "Approved in Chromium over MCP"');
      await page.click("#approve");
      await page.waitForSelector('#status[data-status="approved"]');
      const result = await calling;
      expect(result.isError).toBeUndefined();
      expect(result.structuredContent).toMatchObject({ title: "Approved in Chromium over MCP" });
      expect(created()).toBe(before + 1);
      await page.close();
    });

    it("Deny in the browser: the agent is told nothing ran, and nothing ran", async () => {
      const { client, pages } = await agentWithBrowser();
      const before = created();
      const calling = client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Denied in Chromium over MCP" } });
      await expect.poll(() => pages.length).toBe(1);
      const page = await pages[0]!;
      await page.click("#deny");
      await page.waitForSelector('#status[data-status="denied"]');
      const result = await calling;
      expect(result).toMatchObject({ isError: true, _meta: { "toolpact/code": "CONFIRMATION_DENIED" } });
      expect(textOf(result)).toContain("nothing ran");
      expect(created()).toBe(before);
      await page.close();
    });

    it("Expiry with the page open: the agent is told nothing ran, and the page no longer offers Approve", async () => {
      const { client, pages } = await agentWithBrowser();
      const before = created();
      const calling = client.callTool({ name: "com-test-notes_create_note", arguments: { title: "Left to expire" } });
      await expect.poll(() => pages.length).toBe(1);
      const page = await pages[0]!;
      await page.waitForSelector("#approve");
      clockOffset = 10 * 60_000;
      try {
        const result = await calling;
        expect(result).toMatchObject({ isError: true, _meta: { "toolpact/code": "CONFIRMATION_EXPIRED" } });
        await page.reload();
        await page.waitForSelector('#status[data-status="expired"]');
        expect(await page.$("#approve")).toBeNull();
      } finally {
        clockOffset = 0;
      }
      expect(created()).toBe(before);
      await page.close();
    });
  });
}
