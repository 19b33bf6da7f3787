/**
 * The operator console over HTTP, against a seeded `toolpact serve` host: off unless configured; a
 * request without a console session gets the sign-in form and no data; sign-in takes the admin key and
 * sets a HttpOnly, SameSite=Strict cookie; every page forbids framing and inline script; every post
 * needs the session's CSRF token and the console's own site; actions ask again before they act.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALLER, REFUSED_USER, TENANT, startSeededConsole, type SeededConsole } from "./support/seeded-console.js";

let world: SeededConsole;

beforeAll(async () => {
  world = await startSeededConsole();
});

afterAll(async () => {
  await world?.close();
});

/** Everything the seeded data would show: none of it may reach a request without a session. */
function leaks(html: string): string[] {
  return [REFUSED_USER, CALLER, world.callerKeyId, world.confirmedOperationId, world.pendingRequestId, "PERMISSION_DENIED", "2.3.0"].filter((fact) =>
    html.includes(fact),
  );
}

async function get(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${world.url}${path}`, { headers, redirect: "manual" });
}

async function post(path: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${world.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(form).toString(),
    redirect: "manual",
  });
}

/** Signs in with the admin key: the cookie to send back, and the session's CSRF token (read from a page's form). */
async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const answer = await post("/console/session", { adminKey: world.adminKey, next: "/console/keys" });
  expect(answer.status).toBe(303);
  const cookie = answer.headers.get("set-cookie")!.split(";")[0]!;
  const page = await (await get("/console/keys", { cookie })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  expect(csrf).toBeDefined();
  return { cookie, csrf: csrf! };
}

async function keyState(cookie: string, keyId: string): Promise<string | undefined> {
  const html = await (await get(`/console/keys?tenant=${TENANT}`, { cookie })).text();
  return new RegExp(`data-key="${keyId}">.*?<td class="state">([^<]*)<`).exec(html)?.[1];
}

describe("the console is off unless configured", () => {
  it("answers 404 at /console when the config does not enable it", async () => {
    const off = await startSeededConsole({ console: { enabled: false } });
    try {
      for (const path of ["/console", "/console/keys", "/console/console.css"]) {
        const answer = await fetch(`${off.url}${path}`);
        expect(answer.status, path).toBe(404);
        expect(leaks(await answer.text())).toEqual([]);
      }
    } finally {
      await off.close();
    }
  });
});

describe("the console over HTTP", () => {
  it("gives a request without a console session the sign-in form (401) and no data, on every view", async () => {
    const forged = `toolpact-console=${"A".repeat(24)}.${Date.now().toString(36)}.${"B".repeat(43)}`;
    const views = [
      "/console",
      "/console/",
      `/console?tenant=${TENANT}&outcome=denied`,
      "/console/confirmations",
      "/console/plugins",
      "/console/policy",
      "/console/keys",
    ];
    views.push(`/console/operations/${world.confirmedOperationId}?tenant=${TENANT}`);
    for (const path of views) {
      for (const headers of [{}, { authorization: `Bearer ${world.adminKey}` }, { cookie: forged }]) {
        const answer = await get(path, headers);
        const html = await answer.text();
        expect(answer.status, path).toBe(401);
        expect(html, path).toContain('id="admin-key"');
        // The sign-in form keeps the address asked for (to return to it): nothing else of the seed.
        expect(leaks(html.replace(`value="${path.replace(/\/$/, "").replaceAll("&", "&amp;")}"`, "")), path).toEqual([]);
      }
    }
  });

  it("refuses a wrong admin key without a cookie, and signs the right one in with an HttpOnly, SameSite=Strict cookie", async () => {
    const wrong = await post("/console/session", { adminKey: `${world.adminKey}x` });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("set-cookie")).toBeNull();
    expect(leaks(await wrong.text())).toEqual([]);
    const right = await post("/console/session", { adminKey: world.adminKey, next: "/console/policy" });
    expect(right.status).toBe(303);
    expect(right.headers.get("location")).toBe("/console/policy");
    const cookie = right.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^toolpact-console=[^;]+; Path=\/console; Max-Age=28800; HttpOnly; SameSite=Strict$/);
    // Not Secure over plain http (the browser would drop it); `next` never leaves the console.
    const away = await post("/console/session", { adminKey: world.adminKey, next: "https://evil.example/console" });
    expect(away.headers.get("location")).toBe("/console");
    const sideways = await post("/console/session", { adminKey: world.adminKey, next: "//evil.example/console" });
    expect(sideways.headers.get("location")).toBe("/console");
  });

  it("refuses a sign-in another site posts", async () => {
    for (const headers of [{ "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "same-site" }, { origin: "https://evil.example" }]) {
      const answer = await post("/console/session", { adminKey: world.adminKey }, headers);
      expect(answer.status).toBe(403);
      expect(answer.headers.get("set-cookie")).toBeNull();
    }
  });

  it("forbids framing and inline script or style on every page, signed in or not", async () => {
    const { cookie } = await signIn();
    const paths = ["/console/sign-in", "/console", "/console/confirmations", "/console/plugins", "/console/policy", "/console/keys", "/console/nowhere"];
    paths.push(`/console/operations/${world.confirmedOperationId}?tenant=${TENANT}`);
    for (const path of paths) {
      for (const headers of [{}, { cookie }]) {
        const answer = await get(path, headers);
        const csp = answer.headers.get("content-security-policy") ?? "";
        expect(csp, path).toContain("frame-ancestors 'none'");
        expect(csp, path).toContain("default-src 'none'");
        expect(csp, path).not.toContain("unsafe-inline");
        expect(answer.headers.get("x-frame-options"), path).toBe("DENY");
        expect(answer.headers.get("cache-control"), path).toBe("no-store");
        const html = await answer.text();
        expect(html, path).not.toMatch(/<script|<style|\sstyle=|\son[a-z]+=/i);
      }
    }
    const css = await get("/console/console.css");
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
  });

  it("shows a signed-in operator the seeded facts and never an input or a preview's text", async () => {
    const { cookie } = await signIn();
    const pages = await Promise.all(
      ["/console", "/console/confirmations", "/console/plugins", "/console/policy", "/console/keys", `/console/operations/${world.confirmedOperationId}`].map(
        async (path) => (await get(`${path}${path.includes("?") ? "&" : "?"}tenant=${TENANT}`, { cookie })).text(),
      ),
    );
    const all = pages.join("\n");
    expect(leaks(all).sort()).toEqual(
      [REFUSED_USER, CALLER, world.callerKeyId, world.confirmedOperationId, world.pendingRequestId, "PERMISSION_DENIED", "2.3.0"].sort(),
    );
    for (const secret of ["secret input never shown", "Delete note", "n-1", "n-2", world.adminKey]) expect(all).not.toContain(secret);
  });

  it("links a confirmed call's preview and decision to the story of the operation it let run", async () => {
    const { cookie } = await signIn();
    const html = await (await get(`/console?tenant=${TENANT}&actor=bob`, { cookie })).text();
    const rows = [...html.matchAll(/<tr data-event="[^"]+">(.*?)<\/tr>/g)].map((match) => match[1]!);
    expect(rows).toHaveLength(3); // preview, approve, execute
    for (const row of rows) expect(row).toContain(`/console/operations/${world.confirmedOperationId}?tenant=${TENANT}`);
  });

  it("says what is wrong with a filter, escapes what it echoes, and answers 404 for an unknown operation", async () => {
    const { cookie } = await signIn();
    const badTime = await get(`/console?tenant=${TENANT}&since=yesterday`, { cookie });
    expect(badTime.status).toBe(400);
    expect(await badTime.text()).toContain("since must be a time such as 2026-12-04T09:30 (UTC); got &quot;yesterday&quot;");
    const badOutcome = await get(`/console?tenant=${TENANT}&outcome=maybe`, { cookie });
    expect(badOutcome.status).toBe(400);
    const echoed = await (await get(`/console?tenant=${TENANT}&actor=${encodeURIComponent('"><script>alert(1)</script>')}`, { cookie })).text();
    expect(echoed).not.toContain("<script>");
    expect(echoed).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    const unknown = await get(`/console/operations/01a00000-0000-7000-8000-000000000000?tenant=${TENANT}`, { cookie });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("has no operation");
    // Another tenant's operation is not this tenant's.
    expect((await get(`/console/operations/${world.confirmedOperationId}?tenant=globex`, { cookie })).status).toBe(404);
  });

  it("refuses an action without the session's CSRF token, with another session's, or from another site", async () => {
    const mine = await signIn();
    const theirs = await signIn();
    const form = { tenant: TENANT, keyId: world.callerKeyId, confirm: "yes" };
    const attempts: [Record<string, string>, Record<string, string>][] = [
      [form, { cookie: mine.cookie }],
      [{ ...form, csrf: "" }, { cookie: mine.cookie }],
      [{ ...form, csrf: theirs.csrf }, { cookie: mine.cookie }],
      [
        { ...form, csrf: mine.csrf },
        { cookie: mine.cookie, "sec-fetch-site": "cross-site" },
      ],
      [
        { ...form, csrf: mine.csrf },
        { cookie: mine.cookie, origin: "https://evil.example" },
      ],
      [{ ...form, csrf: mine.csrf }, {}],
    ];
    for (const [body, headers] of attempts) {
      for (const path of ["/console/keys/revoke", "/console/plugins/disable"]) {
        const answer = await post(path, { ...body, pluginId: CALLER }, headers);
        expect([401, 403], `${path} ${JSON.stringify(headers)}`).toContain(answer.status);
      }
    }
    expect(await keyState(mine.cookie, world.callerKeyId)).toBe("live");
    expect(await (await get(`/console/plugins?tenant=${TENANT}`, { cookie: mine.cookie })).text()).toMatch(
      new RegExp(`data-plugin="${CALLER}">.*?<td class="state">enabled<`),
    );
    // GET never acts.
    expect((await get(`/console/keys/revoke?tenant=${TENANT}&keyId=${world.callerKeyId}&confirm=yes`, { cookie: mine.cookie })).status).toBe(405);
  });

  it("asks before revoking a key, then revokes it: the plugin's calls are refused at once", async () => {
    const { cookie, csrf } = await signIn();
    const { keyId, key } = await world.host.runtime.admin.issuePluginKey(TENANT, CALLER);
    const asked = await post("/console/keys/revoke", { csrf, tenant: TENANT, keyId }, { cookie });
    expect(asked.status).toBe(200);
    const question = await asked.text();
    expect(question).toContain('id="confirm-action"');
    expect(question).toContain('name="confirm" value="yes"');
    expect(await keyState(cookie, keyId)).toBe("live");
    const done = await post("/console/keys/revoke", { csrf, tenant: TENANT, keyId, confirm: "yes" }, { cookie });
    expect(done.status).toBe(200);
    expect(await keyState(cookie, keyId)).toMatch(/^revoked /);
    await expect(world.host.runtime.authenticate({ pluginKey: key, actorToken: undefined })).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
  });

  it("signs out: the cookie is cleared, and the old one still needs its CSRF token to sign out", async () => {
    const { cookie, csrf } = await signIn();
    expect((await post("/console/sign-out", {}, { cookie })).status).toBe(403);
    const out = await post("/console/sign-out", { csrf }, { cookie });
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toMatch(/^toolpact-console=; Path=\/console; Max-Age=0; HttpOnly; SameSite=Strict$/);
  });
});
