/**
 * The confirmation page signs the user in at the platform's OpenID provider, end to end in headless
 * Chromium (playwright-core, Debian's /usr/bin/chromium) against a real `oidc-provider` 9 in this
 * process: the user signs in on the provider's login and consent pages, lands back on the request,
 * approves, and the caller's call runs. And each way to cheat the sign-in is refused, nothing decided:
 * another subject than the actor, a changed `state`, a replayed code, an ID token with another nonce,
 * and a presence token once the sign-in is configured.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { type IncomingHttpHeaders, request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConfirmedToolMethod, createHttpTransport } from "@toolpact/client";
import { CHROMIUM, launchChromium } from "../integration/support/deps.js";
import { CREATE_NOTE, PLATFORM_POLICY } from "../integration/support/platform-mode.js";
import { ASSISTANT_ID } from "../integration/support/plugins.js";
import { configureWorld, makeSecrets, startStack, type Stack, type WorldKeys } from "../integration/support/stack.js";
import { mintActorToken, mintPresenceToken } from "../integration/support/tokens.js";
import { CLIENT_ID, listenProvider, type TestProvider } from "./support/provider.js";

const HS256_CLIENT_ID = "toolpact-confirm-hs256";

const SKIP = !existsSync(CHROMIUM) && process.env.CI !== "true";

/** A GET with exactly these headers (fetch would add its own Sec-Fetch-Mode). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

if (SKIP) {
  describe("the confirmation page's sign-in at an OpenID provider, in headless Chromium", () => {
    it.skip("skipped: /usr/bin/chromium is missing (install Debian's chromium; with CI=true this test fails instead)", () => {});
  });
} else {
  describe("the confirmation page's sign-in at an OpenID provider, in headless Chromium", { timeout: 90_000 }, () => {
    let dir: string;
    let provider: TestProvider;
    let stack: Stack;
    /** A second page, registered as a client whose ID tokens the provider signs with HS256. */
    let hsStack: Stack;
    let keys: WorldKeys;
    let browser: BrowserContext;
    const secrets = makeSecrets();

    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), "toolpact-oidc-"));
      provider = await listenProvider(() => "t1");
      stack = await startStack({
        dbFile: path.join(dir, "toolpact.db"),
        secrets,
        publicUrl: "self",
        confirmationLogin: {
          issuer: provider.issuer,
          clientId: CLIENT_ID,
          clientSecret: provider.clientSecret,
          scopes: ["openid", "tenant"],
          tenantClaim: "tid",
        },
      });
      hsStack = await startStack({
        dbFile: path.join(dir, "toolpact-hs.db"),
        secrets,
        publicUrl: "self",
        confirmationLogin: { issuer: provider.issuer, clientId: HS256_CLIENT_ID, clientSecret: provider.clientSecret, tenant: "t1" },
      });
      provider.start([
        { clientId: CLIENT_ID, redirectUri: `${stack.url}/confirm/login/callback` },
        { clientId: HS256_CLIENT_ID, redirectUri: `${hsStack.url}/confirm/login/callback`, idTokenAlg: "HS256" },
      ]);
      keys = await configureWorld(stack);
      await stack.admin("setPolicy", { tenantId: "t1", policy: PLATFORM_POLICY });
      browser = await launchChromium();
    });

    afterAll(async () => {
      await browser?.close();
      await stack?.close();
      await hsStack?.close();
      await provider?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** A platform-mode preview of create-note for `userId`: the tool, the input and the request's link. */
    async function previewFor(title: string, userId = "user-1") {
      const actorToken = await mintActorToken(secrets.actorSecret, { sub: userId, expiresIn: 3600 });
      const transport = createHttpTransport({ url: stack.url, pluginKey: keys.t1[ASSISTANT_ID]!.key, actorToken });
      const tool = createConfirmedToolMethod<typeof CREATE_NOTE.fullName, { title: string }, { title: string }>(transport, CREATE_NOTE);
      const input = { title };
      const preview = await tool.preview(input);
      if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
      const { confirmUrl, requestId } = preview.confirmation;
      return { tool, input, preview, confirmUrl, requestId };
    }

    /** Opens the request's page signed out, follows its Sign in link to the provider and signs in there as `login`. */
    async function signInAtProvider(page: Page, confirmUrl: string, login: string): Promise<void> {
      const signedOut = await page.goto(confirmUrl);
      expect(signedOut?.status()).toBe(401);
      await page.click("#sign-in");
      await signInOnProviderPages(page, login);
    }

    /** On the provider's own pages: its login form (any login name, as the development login allows), then its consent. */
    async function signInOnProviderPages(page: Page, login: string): Promise<void> {
      await page.waitForURL((url) => url.href.startsWith(`${provider.issuer}/interaction/`));
      await page.fill('input[name="login"]', login);
      await page.fill('input[name="password"]', "any password: the development login checks none");
      await page.click('button[type="submit"]');
      await page.waitForSelector('input[name="prompt"][value="consent"]', { state: "attached" });
      await page.click('button[type="submit"]');
    }

    /** The page's own cookies (the provider's, on the same host at another port, are the browser's too). */
    async function toolpactCookies(url: string) {
      return (await browser.cookies(url)).filter((cookie) => cookie.name.startsWith("toolpact-"));
    }

    /** A fresh browser session: no toolpact or provider cookies from an earlier test. */
    async function freshPage(): Promise<Page> {
      await browser.clearCookies();
      return browser.newPage();
    }

    it("signs the user in on the provider's pages, brings them back to the request, and their approval lets the call run", async () => {
      const { tool, input, preview, confirmUrl, requestId } = await previewFor("Approved after signing in");
      const confirming = tool.confirm(preview);
      confirming.catch(() => {}); // awaited below
      const before = stack.probe.invocations.get("create-note") ?? 0;
      const page = await freshPage();
      const started = page.waitForResponse((response) => new URL(response.url()).pathname === "/confirm/login");
      await signInAtProvider(page, confirmUrl, "user-1");
      // The login cookie of the round trip: HttpOnly, SameSite=Lax (it must come back on the provider's redirect).
      const loginCookie = (await (await started).headerValue("set-cookie")) ?? "";
      expect(loginCookie).toMatch(/^toolpact-confirm-login=[^;]+; Path=\/confirm; Max-Age=600; HttpOnly; SameSite=Lax$/);
      const authorize = new URL((await (await started).headerValue("location")) ?? "");
      expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
      expect(authorize.searchParams.get("redirect_uri")).toBe(`${stack.url}/confirm/login/callback`);

      await page.waitForURL(confirmUrl);
      expect(await page.textContent("#summary")).toBe('Create note "Approved after signing in"');
      // The page's session (SameSite=Strict); the login cookie is gone once used.
      const own = await toolpactCookies(confirmUrl);
      expect(own.map((cookie) => cookie.name)).toEqual(["toolpact-confirm"]);
      expect(own[0]).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/confirm" });

      await page.click("#approve");
      await page.waitForSelector('#status[data-status="approved"]');
      const { result } = await tool.execute(input, { confirmationToken: await confirming });
      expect(result.title).toBe("Approved after signing in");
      expect(stack.probe.invocations.get("create-note")).toBe(before + 1);
      const attested = stack.logs.map((line) => JSON.parse(line) as Record<string, unknown>).find((entry) => entry.event === "confirmation_attested");
      expect(attested).toMatchObject({ requestId, decision: "approved", method: "oidc", issuer: provider.issuer });
      await page.close();
    });

    it("refuses a signed-in subject that is not the actor the request is for: nothing is decided", async () => {
      const { confirmUrl, requestId } = await previewFor("Someone else's request");
      const page = await freshPage();
      await signInAtProvider(page, confirmUrl, "user-2");
      await page.waitForURL(confirmUrl);
      expect(await page.textContent("h1")).toBe("Not allowed");
      expect(await page.textContent("#message")).toContain("only the user a request is for can see and decide it");
      expect(await page.locator("#approve").count()).toBe(0);

      // user-2's own session and CSRF token (from a request of their own) do not approve user-1's request.
      const own = await previewFor("user-2's own request", "user-2");
      await page.goto(own.confirmUrl);
      const csrf = await page.locator('form:has(#approve) input[name="csrf"]').getAttribute("value");
      const cookie = (await browser.cookies(confirmUrl)).map((c) => `${c.name}=${c.value}`).join("; ");
      const forged = await fetch(`${confirmUrl}/approve`, {
        method: "POST",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ csrf: csrf ?? "" }),
      });
      expect(forged.status).toBe(403);
      const view = await stack.runtime.describeConfirmation({ tenantId: "t1", userId: "user-1" }, requestId);
      expect(view.status).toBe("pending");
      await page.close();
    });

    it("refuses a way back whose state is not the one this browser's sign-in holds: no session", async () => {
      const { confirmUrl } = await previewFor("Changed state");
      const page = await freshPage();
      // The provider's redirects back to the page are followed here, and the last one goes elsewhere.
      await page.route(
        (url) => url.href.startsWith(`${provider.issuer}/interaction/`),
        async (route) => {
          if (route.request().method() !== "POST" || !route.request().postData()?.includes("prompt=consent")) return route.fallback();
          const resumed = await route.fetch({ maxRedirects: 0 });
          const resume = new URL(resumed.headers().location ?? "", route.request().url());
          const back = await page.request.get(resume.href, { maxRedirects: 0 });
          const wayBack = new URL(back.headers().location ?? "");
          wayBack.searchParams.set("state", "a-state-an-attacker-chose");
          return route.fulfill({ status: 303, headers: { location: wayBack.href } });
        },
      );
      await signInAtProvider(page, confirmUrl, "user-1");
      await page.waitForURL((url) => url.pathname === "/confirm/login/callback");
      await page.waitForSelector("#message");
      expect(await page.textContent("h1")).toBe("Not allowed");
      expect(await page.textContent("#message")).toContain("its state does not match");
      expect(await toolpactCookies(confirmUrl)).toEqual([]);
      await page.close();
    });

    it("refuses a replayed code, even with the browser's own login cookie: no second session", async () => {
      const { confirmUrl } = await previewFor("Replayed code");
      const page = await freshPage();
      const started = page.waitForResponse((response) => new URL(response.url()).pathname === "/confirm/login");
      const callback = page.waitForRequest((request) => new URL(request.url()).pathname === "/confirm/login/callback");
      await signInAtProvider(page, confirmUrl, "user-1");
      await page.waitForURL(confirmUrl);
      const loginCookie = ((await (await started).headerValue("set-cookie")) ?? "").split(";")[0]!;
      const replay = await fetch((await callback).url(), { headers: { cookie: loginCookie }, redirect: "manual" });
      expect(replay.status).toBe(401);
      expect(await replay.text()).toContain("refused this sign-in&#39;s code (invalid_grant)");
      expect(replay.headers.getSetCookie().filter((value) => value.startsWith("toolpact-confirm="))).toEqual([]);
      await page.close();
    });

    it("refuses an ID token whose nonce is not the one this sign-in asked for", async () => {
      const { confirmUrl } = await previewFor("Another nonce");
      const page = await freshPage();
      // The page's redirect to the provider goes out with another nonce than the login cookie holds.
      await page.route(
        (url) => url.pathname === "/confirm/login",
        async (route) => {
          const response = await route.fetch({ maxRedirects: 0 });
          const authorize = new URL(response.headers().location ?? "");
          authorize.searchParams.set("nonce", "a-nonce-of-another-sign-in");
          return route.fulfill({ response, headers: { ...response.headers(), location: authorize.href } });
        },
      );
      await signInAtProvider(page, confirmUrl, "user-1");
      await page.waitForURL((url) => url.pathname === "/confirm/login/callback");
      await page.waitForSelector("#message");
      expect(await page.textContent("#message")).toContain("carries another nonce");
      expect(await toolpactCookies(confirmUrl)).toEqual([]);
      await page.close();
    });

    it("refuses an ID token signed with HS256 (the client secret), whatever its signature says: only asymmetric algorithms", async () => {
      const page = await freshPage();
      await page.goto(`${hsStack.url}/confirm/login`);
      await signInOnProviderPages(page, "user-1");
      await page.waitForURL((url) => url.pathname === "/confirm/login/callback");
      await page.waitForSelector("#message");
      expect(await page.textContent("#message")).toContain("the sign-in's ID token did not verify (its signature algorithm is not allowed)");
      expect(await toolpactCookies(hsStack.url)).toEqual([]);
      await page.close();
    });

    it("refuses presence tokens once the sign-in is configured", async () => {
      const token = await mintPresenceToken(secrets.actorSecret);
      const response = await fetch(`${stack.url}/confirm/session?token=${encodeURIComponent(token)}`);
      expect(response.status).toBe(403);
      expect(await response.text()).toContain("not with presence tokens");
      expect(response.headers.getSetCookie()).toEqual([]);
    });

    it("starts a sign-in another site linked to only from the page's own link, and never for a post or a frame", async () => {
      const navigation = { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" };
      const navigated = await rawGet(`${stack.url}/confirm/login?request=abc`, { ...navigation, "sec-fetch-dest": "document" });
      expect(navigated.status).toBe(200);
      expect(navigated.headers["set-cookie"]).toBeUndefined();
      expect(navigated.body).toContain('<a id="sign-in" href="login?request=abc">');
      const framed = await rawGet(`${stack.url}/confirm/login?request=abc`, { ...navigation, "sec-fetch-dest": "iframe" });
      expect(framed.status).toBe(403);
      expect(framed.headers["set-cookie"]).toBeUndefined();
      expect(framed.headers["x-frame-options"]).toBe("DENY");
      expect(framed.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
      // The provider's way back, fetched by another site's script rather than navigated to: refused before any code is spent.
      const fetched = await rawGet(`${stack.url}/confirm/login/callback?code=c&state=s`, {
        "sec-fetch-site": "cross-site",
        "sec-fetch-mode": "cors",
        "sec-fetch-dest": "empty",
      });
      expect(fetched.status).toBe(403);
    });
  });
}
