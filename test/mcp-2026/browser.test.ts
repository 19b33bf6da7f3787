/**
 * A 2026-07-28 agent's confirmed call, decided by a person in headless Chromium (playwright-core, Debian's
 * /usr/bin/chromium): the v2 SDK client pinned to the revision gets `input_required` with the page's URL,
 * the link opens in the browser, the person signs in and clicks on toolpact's real page, and the client
 * retries with the `requestState` when the person is done.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/client";
import type { BrowserContext, Page } from "playwright-core";
import { CHROMIUM, launchChromium } from "../integration/support/deps.js";
import { startMcpWorld, textOf, type McpWorld } from "../mcp/support/mcp-world.js";
import { openInBrowser } from "../mcp/support/open-in-browser.js";
import { connectHttp } from "./support/modern-clients.js";

const SKIP = !existsSync(CHROMIUM) && process.env.CI !== "true";
const CREATE = "com-test-notes_create_note";

if (SKIP) {
  describe("2026-07-28 approvals in headless Chromium", () => {
    it.skip("skipped: /usr/bin/chromium is missing (install Debian's chromium; with CI=true this test fails instead)", () => {});
  });
} else {
  describe("2026-07-28 approvals in headless Chromium", () => {
    let world: McpWorld;
    let browser: BrowserContext;
    let clockOffset = 0;
    const clients: Client[] = [];

    beforeAll(async () => {
      world = await startMcpWorld({ clock: () => Date.now() + clockOffset });
      browser = await launchChromium();
    });
    afterAll(async () => {
      await Promise.all(clients.map((client) => client.close().catch(() => {})));
      await browser?.close();
      await world?.close();
    });

    /**
     * A pinned client whose user opens each URL input request in the browser; the client answers the request
     * (and so retries the call) when the test says the person is done.
     */
    async function agentWithBrowser() {
      const opened: { page: Promise<Page>; done: (action: "accept" | "cancel") => void }[] = [];
      const client = await connectHttp(world, {
        onUrl: (input) =>
          new Promise((resolve) => {
            const page = openInBrowser(browser, world, input.url);
            page.catch(() => {});
            opened.push({ page, done: (action) => resolve({ action }) });
          }),
      });
      clients.push(client);
      return { client, opened };
    }

    const created = () => world.stack.probe.invocations.get("create-note") ?? 0;

    it("Approve in the browser: the retry runs the call once and returns the result", async () => {
      const { client, opened } = await agentWithBrowser();
      const before = created();
      const calling = client.callTool({ name: CREATE, arguments: { title: "Approved in Chromium at 2026-07-28" } });
      await expect.poll(() => opened.length).toBe(1);
      const page = await opened[0]!.page;
      expect(await page.textContent("#summary")).toBe('Create note "Approved in Chromium at 2026-07-28"');
      await page.click("#approve");
      await page.waitForSelector('#status[data-status="approved"]');
      opened[0]!.done("accept");
      const result = await calling;
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ title: "Approved in Chromium at 2026-07-28" });
      expect(created()).toBe(before + 1);
      await page.close();
    });

    it("Deny in the browser: the retry is told nothing ran, and nothing ran", async () => {
      const { client, opened } = await agentWithBrowser();
      const before = created();
      const calling = client.callTool({ name: CREATE, arguments: { title: "Denied in Chromium at 2026-07-28" } });
      await expect.poll(() => opened.length).toBe(1);
      const page = await opened[0]!.page;
      await page.click("#deny");
      await page.waitForSelector('#status[data-status="denied"]');
      opened[0]!.done("accept");
      const result = await calling;
      expect(result).toMatchObject({ isError: true, _meta: { "toolpact/code": "CONFIRMATION_DENIED" } });
      expect(textOf(result)).toContain("nothing ran");
      expect(created()).toBe(before);
      await page.close();
    });

    it("Expiry with the page open: the retry is told nothing ran, and the page no longer offers Approve", async () => {
      const { client, opened } = await agentWithBrowser();
      const before = created();
      const calling = client.callTool({ name: CREATE, arguments: { title: "Left to expire at 2026-07-28" } });
      await expect.poll(() => opened.length).toBe(1);
      const page = await opened[0]!.page;
      await page.waitForSelector("#approve");
      clockOffset = 10 * 60_000;
      try {
        opened[0]!.done("accept");
        const result = await calling;
        expect(result).toMatchObject({ isError: true, _meta: { "toolpact/code": "CONFIRMATION_EXPIRED" } });
        expect(textOf(result)).toContain("nothing ran");
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
