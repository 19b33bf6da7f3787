/**
 * An MCP agent's confirmed call, decided by a person in headless Chromium (playwright-core, Debian's
 * /usr/bin/chromium): the SDK client receives the URL elicitation and opens the link as a client would;
 * the person signs in through the identity service's link and clicks on toolpact's real page.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext, Page } from "playwright-core";
import { CHROMIUM, launchChromium } from "../integration/support/deps.js";
import { startMcpWorld, textOf, type McpWorld } from "./support/mcp-world.js";
import { openInBrowser } from "./support/open-in-browser.js";

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

    /** A client whose user opens every confirmation link in the browser; `pages` get each opened page. */
    async function agentWithBrowser() {
      const pages: Promise<Page>[] = [];
      const client = await world.connect({
        onUrlElicitation: (params) => {
          const opening = openInBrowser(browser, world, params.url);
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
