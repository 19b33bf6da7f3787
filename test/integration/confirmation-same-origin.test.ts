/**
 * The confirmation page mounted in an app (issue 23, finding 3): on the app's own origin the app's
 * scripts could read the page and post its form, so there it decides nothing; on an origin of its own
 * (`confirmationOrigin`) it decides only for requests made from that origin. Attacked with node:http
 * (any headers a script could make the browser send, and the person's real cookie and CSRF token) and
 * with a real script in headless Chromium; the person's own click still approves.
 */
import { existsSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext } from "playwright-core";
import { createHttpTransport } from "@toolpact/client";
import type { PluginSdk } from "@toolpact/runtime";
import { createTestHost, type TestHost } from "@toolpact/runtime/testing";
import { createNodeHandler, type ToolpactNodeHandler } from "@toolpact/server";
import { CHROMIUM, launchChromium } from "./support/deps.js";

const NOTES = "com.example.notes";
const manifest = {
  id: NOTES,
  version: "1.0.0",
  permissions: ["tools:provide"],
  tools: [
    {
      name: "create-record",
      effect: "write",
      inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"], additionalProperties: false },
    },
  ],
};
const plugins = [
  {
    manifest,
    activate: (sdk: PluginSdk) => {
      sdk.tools.provide<{ title: string }, { id: string }>("create-record", {
        preview: (input) => ({ summary: `Create record "${input.title}"` }),
        execute: (input) => ({ id: input.title }),
      });
    },
  },
];

/** The app's own page: any script on it runs with the app's origin (here, an attacker's script). */
const APP_PAGE = "<!doctype html><title>the app</title><p>the app's own page</p>";

let host: TestHost;
let server: Server;
let shared: ToolpactNodeHandler;
let dedicated: ToolpactNodeHandler;
/** Where the app lives: `http://127.0.0.1:<port>`. */
let appOrigin: string;
/** The confirmation page's own origin: `http://localhost:<port>`, the same server under another host name. */
let confirmOrigin: string;

beforeAll(async () => {
  host = await createTestHost({ plugins, confirmation: "platform" });
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  appOrigin = `http://127.0.0.1:${port}`;
  confirmOrigin = `http://localhost:${port}`;
  shared = createNodeHandler({ runtime: host.runtime, adminKey: undefined, basePath: "/shared" });
  dedicated = createNodeHandler({ runtime: host.runtime, adminKey: undefined, basePath: "/toolpact", confirmationOrigin: confirmOrigin });
  server.on("request", (req, res) => {
    if (req.url === "/app") {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(APP_PAGE);
      return;
    }
    shared(req, res, () => dedicated(req, res));
  });
});

afterAll(async () => {
  await shared?.close();
  await dedicated?.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await host?.close();
});

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly setCookie: string | undefined;
}

/** A request with exactly these headers (Host included), as a browser would send for a script or a click. */
function send(url: string, options: { method?: "GET" | "POST"; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = request(
      {
        host: "127.0.0.1",
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? "GET",
        headers: { host: target.host, ...options.headers },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, setCookie: res.headers["set-cookie"]?.[0] }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

/** A platform-mode preview made through the mount: its request id. */
async function ask(title: string, base: string): Promise<string> {
  const transport = createHttpTransport({ url: base, pluginKey: await host.pluginKey(), actorToken: await host.actorToken() });
  const preview = await transport.preview({ providerId: NOTES, tool: "create-record" }, { title });
  if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected a platform-mode preview");
  return preview.confirmation.requestId;
}

async function statusOf(requestId: string): Promise<string> {
  return (await host.runtime.describeConfirmation({ tenantId: host.tenantId, userId: host.userId }, requestId)).status;
}

/** Signs in at `pageBase` (`<origin>/<mount>`) as a link opened by the person; the session cookie. */
async function signIn(pageBase: string): Promise<string> {
  const token = encodeURIComponent(await host.presenceToken());
  const answer = await send(`${pageBase}/confirm/session?token=${token}`, { headers: { "sec-fetch-site": "none" } });
  if (answer.setCookie === undefined) throw new Error(`sign-in failed: HTTP ${answer.status} ${answer.body}`);
  return answer.setCookie.split(";")[0]!;
}

const form = (csrf: string) => ({ "content-type": "application/x-www-form-urlencoded", body: new URLSearchParams({ csrf }).toString() });

describe("a mount on the app's own origin (no confirmationOrigin)", () => {
  it("shows the request but offers no buttons and refuses every approval, even one the app's script makes with the person's session", async () => {
    const requestId = await ask("shared origin", `${appOrigin}/shared`);
    const cookie = await signIn(`${appOrigin}/shared`);
    const page = await send(`${appOrigin}/shared/confirm/${requestId}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.body).toContain("Create record &quot;shared origin&quot;");
    expect(page.body).not.toContain('name="csrf"');
    expect(page.body).toContain('id="decide-elsewhere"');
    const script = { cookie, origin: appOrigin, "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors" };
    for (const decision of ["approve", "deny"]) {
      const { body, ...headers } = form("any");
      const attempt = await send(`${appOrigin}/shared/confirm/${requestId}/${decision}`, { method: "POST", headers: { ...script, ...headers }, body });
      expect(attempt.status, decision).toBe(403);
      expect(attempt.body).toContain("mounted on the app&#39;s own origin");
    }
    expect(await statusOf(requestId)).toBe("pending");
  });
});

describe("a mount with an origin of its own (confirmationOrigin)", () => {
  it("refuses a script on the app's origin that holds the person's cookie and CSRF token; the person's own post approves", async () => {
    const requestId = await ask("own origin", `${appOrigin}/toolpact`);
    const cookie = await signIn(`${confirmOrigin}/toolpact`);
    const page = await send(`${confirmOrigin}/toolpact/confirm/${requestId}`, { headers: { cookie } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1];
    expect(csrf).toBeDefined();

    // On the app's host, the page does not exist (a script there reads nothing), and nothing is decided.
    const onAppHost = await send(`${appOrigin}/toolpact/confirm/${requestId}`, { headers: { cookie } });
    expect(onAppHost.status).toBe(404);
    expect(onAppHost.body).toContain(`served only at ${confirmOrigin}`);
    expect(onAppHost.body).not.toContain('name="csrf"');
    const { body, ...formHeaders } = form(csrf!);
    const attempts: Record<string, { url: string; headers: Record<string, string> }> = {
      "same-origin post on the app's host": { url: appOrigin, headers: { origin: appOrigin, "sec-fetch-site": "same-origin" } },
      "the app's script posting across origins": { url: confirmOrigin, headers: { origin: appOrigin, "sec-fetch-site": "same-site" } },
      "the app's Origin without fetch metadata": { url: confirmOrigin, headers: { origin: appOrigin } },
      "fetch metadata saying another origin of the site": { url: confirmOrigin, headers: { "sec-fetch-site": "same-site" } },
    };
    for (const [what, attempt] of Object.entries(attempts)) {
      const answer = await send(`${attempt.url}/toolpact/confirm/${requestId}/approve`, {
        method: "POST",
        headers: { cookie, ...formHeaders, ...attempt.headers },
        body,
      });
      expect(answer.status, what).toBeGreaterThanOrEqual(400);
      expect(await statusOf(requestId), what).toBe("pending");
    }
    const overTrpc = await send(`${appOrigin}/toolpact/trpc/confirmations.approve`, {
      method: "POST",
      headers: { cookie, "x-toolpact-csrf": csrf!, "content-type": "application/json", origin: appOrigin, "sec-fetch-site": "same-origin" },
      body: JSON.stringify({ requestId }),
    });
    expect(overTrpc.status).toBe(403);
    expect(await statusOf(requestId)).toBe("pending");

    const own = await send(`${confirmOrigin}/toolpact/confirm/${requestId}/approve`, {
      method: "POST",
      headers: { cookie, ...formHeaders, origin: confirmOrigin, "sec-fetch-site": "same-origin" },
      body,
    });
    expect(own.status).toBe(200);
    expect(await statusOf(requestId)).toBe("approved");
  });

  it("refuses a confirmationOrigin that is not an origin", () => {
    expect(() => createNodeHandler({ runtime: host.runtime, adminKey: undefined, confirmationOrigin: "https://confirm.example/toolpact" })).toThrow(
      /confirmationOrigin must be an http\(s\) origin/,
    );
  });
});

const SKIP = !existsSync(CHROMIUM) && process.env.CI !== "true";

describe.skipIf(SKIP)("in headless Chromium", () => {
  let browser: BrowserContext;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** The attack, run by a script on the app's page: read the confirmation page, take its CSRF token, post Approve. */
  async function attackFromApp(pageUrl: string): Promise<{ read: string; csrf: string; approve: string }> {
    const page = await browser.newPage();
    await page.goto(`${appOrigin}/app`);
    const outcome = await page.evaluate(async (target) => {
      const describe = (error: unknown) => `blocked: ${String(error)}`;
      let read = "";
      let csrf = "";
      try {
        const response = await fetch(target, { credentials: "include" });
        const html = await response.text();
        csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
        read = `HTTP ${response.status}`;
      } catch (error) {
        read = describe(error);
      }
      let approve = "";
      try {
        const response = await fetch(`${target}/approve`, {
          method: "POST",
          credentials: "include",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: `csrf=${encodeURIComponent(csrf)}`,
        });
        approve = `HTTP ${response.status}`;
      } catch (error) {
        approve = describe(error);
      }
      return { read, csrf, approve };
    }, pageUrl);
    await page.close();
    return outcome;
  }

  it("a script on the app's page, same origin as the mount, cannot approve; the page there offers no buttons", async () => {
    const requestId = await ask("chromium shared", `${appOrigin}/shared`);
    const page = await browser.newPage();
    await page.goto(`${appOrigin}/shared/confirm/session?token=${encodeURIComponent(await host.presenceToken())}&next=/shared/confirm/${requestId}`);
    await page.waitForSelector("#decide-elsewhere");
    expect(await page.locator("#approve").count()).toBe(0);
    await page.close();
    const outcome = await attackFromApp(`${appOrigin}/shared/confirm/${requestId}`);
    expect(outcome).toEqual({ read: "HTTP 200", csrf: "", approve: "HTTP 403" });
    expect(await statusOf(requestId)).toBe("pending");
  });

  it("with confirmationOrigin: the app's script reads nothing and approves nothing; the person's click approves and still sees what", async () => {
    const requestId = await ask("chromium own origin", `${appOrigin}/toolpact`);
    const page = await browser.newPage();
    await page.goto(`${confirmOrigin}/toolpact/confirm/session?token=${encodeURIComponent(await host.presenceToken())}&next=/toolpact/confirm/${requestId}`);
    await page.waitForSelector("#approve");

    // The person is signed in at the confirmation origin, and the app's script tries both origins.
    const sameOrigin = await attackFromApp(`${appOrigin}/toolpact/confirm/${requestId}`);
    expect(sameOrigin).toEqual({ read: "HTTP 404", csrf: "", approve: "HTTP 404" });
    const crossOrigin = await attackFromApp(`${confirmOrigin}/toolpact/confirm/${requestId}`);
    expect(crossOrigin.read).toMatch(/^blocked/); // CORS: the page cannot be read from the app's origin
    expect(crossOrigin.csrf).toBe("");
    expect(await statusOf(requestId)).toBe("pending");

    await page.click("#approve");
    await page.waitForSelector('#status[data-status="approved"]');
    expect(await page.textContent("#summary")).toBe('Create record "chromium own origin"');
    expect(await page.textContent("#input")).toContain("chromium own origin");
    expect(await statusOf(requestId)).toBe("approved");
    await page.close();
  });
});
