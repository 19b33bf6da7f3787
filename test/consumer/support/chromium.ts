/**
 * Headless Chromium for the consumer tests: Debian's /usr/bin/chromium driven by playwright-core (a dev
 * dependency of @toolpact/server, loaded from there). Typed here by the little these tests use, so the
 * consumer tests type-check without playwright-core's types or the dom lib.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

/** Debian's Chromium (never a downloaded browser). */
export const CHROMIUM = "/usr/bin/chromium";

/** The page operations these tests use. */
export interface BrowserPage {
  goto(url: string): Promise<unknown>;
  waitForURL(url: RegExp): Promise<void>;
  click(selector: string): Promise<void>;
  waitForSelector(selector: string): Promise<unknown>;
}

/** A browser with a fresh profile, removed once it closes. */
export interface Browser {
  newPage(): Promise<BrowserPage>;
  close(): Promise<void>;
}

interface Playwright {
  chromium: { launchPersistentContext(profile: string, options: object): Promise<Browser & { once(event: "close", listener: () => void): void }> };
}

/** Launches headless Chromium with the flags these machines need. */
export async function launchChromium(repoRoot: string): Promise<Browser> {
  const fromServer = createRequire(path.join(repoRoot, "packages/server/package.json"));
  const { chromium } = (await import(pathToFileURL(fromServer.resolve("playwright-core")).href)) as Playwright;
  const profile = mkdtempSync(path.join(tmpdir(), "toolpact-chromium-"));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  browser.once("close", () => {
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch {
      // Chromium's helpers may still be writing there for a moment: a leftover profile in the temp dir is harmless
    }
  });
  return browser;
}
