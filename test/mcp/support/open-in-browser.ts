/**
 * What an MCP client does with a confirmation link, with the person in the loop: the link opens in the
 * browser, where the identity service (http://identity.example, served by the browser's routing) signs the
 * person in with a presence token and leads on to the request's page.
 */
import type { BrowserContext, Page } from "playwright-core";
import { mintPresenceToken } from "../../integration/support/tokens.js";
import type { McpWorld } from "./mcp-world.js";

/** Opens `url` (a confirmation page) signed in as the world's person; resolves once the page shows the request. */
export async function openInBrowser(browser: BrowserContext, world: McpWorld, url: string): Promise<Page> {
  const page = await browser.newPage();
  const token = await mintPresenceToken(world.secrets.actorSecret);
  const signIn = `${world.stack.url}/confirm/session?token=${encodeURIComponent(token)}&next=${encodeURIComponent(new URL(url).pathname)}`;
  await page.route("http://identity.example/**", (route) =>
    route.fulfill({ status: 200, contentType: "text/html", body: `<a id="continue" href="${signIn.replaceAll("&", "&amp;")}">Continue</a>` }),
  );
  await page.goto("http://identity.example/confirm-for-toolpact");
  await page.click("#continue");
  // A sign-in link followed from another site signs in only after a same-site step on toolpact's page.
  await page.waitForSelector('form[action="session"] #continue');
  await page.click('form[action="session"] #continue');
  await page.waitForURL(url);
  await page.waitForSelector("#summary, #message");
  return page;
}
