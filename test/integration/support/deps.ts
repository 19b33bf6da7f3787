/**
 * Third-party modules only @toolpact/server depends on (the repository root does not), resolved from
 * that package so tests under test/ can load them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const fromServer = createRequire(new URL("../../../packages/server/package.json", import.meta.url));

/** Loads playwright-core (a dev dependency of @toolpact/server). */
export async function loadPlaywright(): Promise<typeof import("playwright-core")> {
  return (await import(pathToFileURL(fromServer.resolve("playwright-core")).href)) as typeof import("playwright-core");
}

/** Debian's Chromium, which the browser tests drive (never a downloaded browser). */
export const CHROMIUM = "/usr/bin/chromium";

/** Headless Chromium with a fresh profile in a temp dir, removed when the browser closes. */
export async function launchChromium(): Promise<import("playwright-core").BrowserContext> {
  const { chromium } = await loadPlaywright();
  const profile = mkdtempSync(path.join(tmpdir(), "toolpact-chromium-"));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  // Chromium's helper processes may still be writing there for a moment after the close.
  browser.once("close", () => {
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch {
      // a leftover profile in the temp dir is harmless
    }
  });
  return browser;
}
