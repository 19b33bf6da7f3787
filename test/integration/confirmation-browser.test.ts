/**
 * End to end in headless Chromium (playwright-core, Debian's /usr/bin/chromium): a caller previews in
 * platform mode through the generated-style client and waits in `confirm()`; the person opens the
 * confirmation link with a presence session and clicks Approve (or Deny) on the real page.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext } from "playwright-core";
import { createConfirmedToolMethod, createHttpTransport, isToolpactError, type ToolDescriptor } from "@toolpact/client";
import { CHROMIUM, launchChromium } from "./support/deps.js";
import { CREATE_NOTE, PLATFORM_POLICY } from "./support/platform-mode.js";
import { ASSISTANT_ID, manifest } from "./support/plugins.js";
import { configureWorld, makeSecrets, startStack, type Stack, type WorldKeys } from "./support/stack.js";
import { mintActorToken, mintPresenceToken } from "./support/tokens.js";

const SKIP = !existsSync(CHROMIUM) && process.env.CI !== "true";

interface NoteInput {
  title: string;
}

/** An external tool whose preview shows the caller's input as it came: what a padded input could hide. */
const MAILER_ID = "com.test.mailer";
const mailDescriptor: ToolDescriptor<"com.test.mailer:send-mail@1"> = {
  providerId: MAILER_ID,
  name: "send-mail",
  version: 1,
  fullName: "com.test.mailer:send-mail@1",
  effect: "external",
  requiresConfirmation: true,
};
const mailerManifest = {
  id: MAILER_ID,
  version: "1.0.0",
  permissions: ["tools:provide"],
  tools: [{ name: "send-mail", effect: "external", inputSchema: { type: "object" } }],
};
interface NoteOutput {
  id: string;
  title: string;
}

if (SKIP) {
  describe("the confirmation page in headless Chromium", () => {
    it.skip("skipped: /usr/bin/chromium is missing (install Debian's chromium; with CI=true this test fails instead)", () => {});
  });
} else {
  describe("the confirmation page in headless Chromium", () => {
    let dir: string;
    let stack: Stack;
    let keys: WorldKeys;
    let browser: BrowserContext;
    const secrets = makeSecrets();

    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), "toolpact-browser-"));
      stack = await startStack({
        dbFile: path.join(dir, "toolpact.db"),
        secrets,
        publicUrl: "self",
        setup: (runtime) => {
          runtime.registerPlugin(manifest(mailerManifest));
          runtime.sdkFor(MAILER_ID).tools.provide("send-mail", {
            preview: (input: Record<string, unknown>) => ({ summary: `Send "${String(input.subject)}" with ${String(input.attachment)}`, details: input }),
            execute: () => ({ sent: true }),
          });
        },
      });
      keys = await configureWorld(stack);
      await stack.admin("installPlugin", { tenantId: "t1", pluginId: MAILER_ID });
      await stack.admin("setPolicy", { tenantId: "t1", policy: PLATFORM_POLICY });
      browser = await launchChromium();
    });

    afterAll(async () => {
      await browser?.close();
      await stack?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    async function client() {
      const actorToken = await mintActorToken(secrets.actorSecret, { expiresIn: 3600 });
      const transport = createHttpTransport({ url: stack.url, pluginKey: keys.t1[ASSISTANT_ID]!.key, actorToken });
      return createConfirmedToolMethod<typeof CREATE_NOTE.fullName, NoteInput, NoteOutput>(transport, CREATE_NOTE);
    }

    /**
     * Opens the confirmation link the way the platform's identity service sends a browser: a page on
     * another site (http://identity.example, served by the browser's request routing) links to
     * /confirm/session with a presence token. That cross-site navigation alone signs nobody in (login
     * CSRF): the page asks the person to continue, and its own post signs them in and leads on.
     */
    async function openConfirmation(confirmUrl: string) {
      await browser.clearCookies();
      const page = await browser.newPage();
      const token = await mintPresenceToken(secrets.actorSecret);
      const next = new URL(confirmUrl).pathname;
      const signIn = `${stack.url}/confirm/session?token=${encodeURIComponent(token)}&next=${encodeURIComponent(next)}`;
      await page.route("http://identity.example/**", (route) =>
        route.fulfill({ status: 200, contentType: "text/html", body: `<a id="continue" href="${signIn.replaceAll("&", "&amp;")}">Continue</a>` }),
      );
      await page.goto("http://identity.example/confirm-for-toolpact");
      await page.click("#continue");
      await page.waitForURL(/\/confirm\/session\?/);
      await page.waitForSelector('form[action="session"] #continue');
      expect(await browser.cookies(confirmUrl)).toHaveLength(0);
      await page.click('form[action="session"] #continue');
      await page.waitForURL(confirmUrl);
      await page.waitForSelector("#summary, #message");
      return page;
    }

    it("Approve: the caller's confirm() resolves with a token and execute succeeds", async () => {
      const tool = await client();
      const input = { title: "Approved in Chromium" };
      const preview = await tool.preview(input);
      if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
      expect(preview.confirmation.confirmUrl.startsWith(`${stack.url}/confirm/`)).toBe(true);
      const confirming = tool.confirm(preview);
      confirming.catch(() => {}); // awaited below; this only keeps a failed assertion from leaving it unhandled

      const page = await openConfirmation(preview.confirmation.confirmUrl);
      expect(await page.textContent("#summary")).toBe('Create note "Approved in Chromium"');
      expect(await page.textContent("#caller")).toContain(ASSISTANT_ID);
      const cookies = await browser.cookies(preview.confirmation.confirmUrl);
      expect(cookies).toHaveLength(1);
      expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/confirm", secure: false });

      await page.click("#approve");
      await page.waitForSelector('#status[data-status="approved"]');
      // What was approved stays on the page.
      expect(await page.textContent("h2")).toBe("What you approved");
      expect(await page.textContent("#summary")).toBe('Create note "Approved in Chromium"');
      expect(await page.textContent("#input")).toContain("Approved in Chromium");
      const token = await confirming;
      const { operationId, result } = await tool.execute(input, { confirmationToken: token });
      expect(operationId).toMatch(/^[0-9a-f-]{36}$/);
      expect(result.title).toBe("Approved in Chromium");
      await page.close();
    });

    it("Deny: the caller's confirm() rejects with CONFIRMATION_DENIED and nothing runs", async () => {
      const tool = await client();
      const input = { title: "Denied in Chromium" };
      const preview = await tool.preview(input);
      if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
      const confirming = tool.confirm(preview).then(
        () => undefined,
        (error: unknown) => error,
      );
      const before = stack.probe.invocations.get("create-note") ?? 0;

      const page = await openConfirmation(preview.confirmation.confirmUrl);
      await page.click("#deny");
      await page.waitForSelector('#status[data-status="denied"]');
      expect(await page.textContent("#summary")).toBe('Create note "Denied in Chromium"');
      const error = await confirming;
      expect(isToolpactError(error) && error.code).toBe("CONFIRMATION_DENIED");
      expect(stack.probe.invocations.get("create-note") ?? 0).toBe(before);
      await page.close();
    });

    it("shows a recipient buried after padding and a bidi-override file name, whole and visible, before the buttons", async () => {
      const actorToken = await mintActorToken(secrets.actorSecret, { expiresIn: 3600 });
      const transport = createHttpTransport({ url: stack.url, pluginKey: keys.t1[ASSISTANT_ID]!.key, actorToken });
      const tool = createConfirmedToolMethod<typeof mailDescriptor.fullName, Record<string, unknown>, unknown>(transport, mailDescriptor);
      // The caller chose the member order: the recipient comes after 60,000 characters of padding.
      const input = { subject: "Quarterly invoice", padding: "\u00a0".repeat(60_000), attachment: "invoice\u202Efdp.exe", to: "attacker@evil.example" };
      const preview = await tool.preview(input);
      if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
      const page = await openConfirmation(preview.confirmation.confirmUrl);
      const summary = page.locator("#summary");
      expect(await summary.locator(".hidden-char").allTextContents()).toEqual(["U+202E"]);
      // The bidi override is shown as a badge, never applied: the file name reads as written, in order.
      expect(await summary.textContent()).toBe('Send "Quarterly invoice" with invoiceU+202Efdp.exe');
      for (const block of ["#details", "#input"]) {
        const recipient = page.locator(block).getByText("attacker@evil.example", { exact: false });
        await recipient.scrollIntoViewIfNeeded();
        expect(await recipient.isVisible(), block).toBe(true);
        expect(await page.locator(block).locator(".hidden-char", { hasText: "U+202E" }).count(), block).toBe(1);
      }
      // The exact input: whole, in canonical member order, and every block ends above the buttons.
      const exact = (await page.locator("#input").textContent())!;
      expect(exact).toContain("\u00a0".repeat(60_000));
      expect(exact.indexOf('"attachment"')).toBeLessThan(exact.indexOf('"padding"'));
      expect(exact.indexOf('"padding"')).toBeLessThan(exact.indexOf('"to"'));
      const inputBox = (await page.locator("#input").boundingBox())!;
      const approveBox = (await page.locator("#approve").boundingBox())!;
      expect(inputBox.y + inputBox.height).toBeLessThanOrEqual(approveBox.y);
      const scrollable = await page.locator("#input").evaluate((element) => element.scrollHeight > element.clientHeight + 1);
      expect(scrollable).toBe(false);
      await page.click("#deny");
      await page.waitForSelector('#status[data-status="denied"]');
      await page.close();
    });

    it("refuses to be framed by another page (frame-ancestors 'none')", async () => {
      const tool = await client();
      const preview = await tool.preview({ title: "Framed" });
      if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
      const signedIn = await openConfirmation(preview.confirmation.confirmUrl);
      await signedIn.close();

      const attacker = await browser.newPage();
      await attacker.setContent(`<iframe src="${preview.confirmation.confirmUrl}" width="800" height="600"></iframe>`);
      await attacker.waitForTimeout(1_000);
      const frame = attacker.frames().find((candidate) => candidate !== attacker.mainFrame());
      // Rendered, the page would show either its buttons or its sign-in message; blocked, neither.
      const rendered = frame ? await frame.evaluate(() => document.querySelector("#approve, #message") !== null).catch(() => false) : false;
      expect(rendered).toBe(false);
      await attacker.close();
    });
  });
}
