/**
 * docs/wire-format.md's table of refusals, made true by a real server: each row names a request, and this
 * test makes that request against a real server on 127.0.0.1:0 (SQLite file, the test world's plugins)
 * and compares the HTTP status and `toolpactCode` with the row. A row without a request here, or a
 * request here without its row, fails the test, so the table and the server cannot drift apart.
 * The same file pins the retry rule the page states: an idempotency key is looked up before the token.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_MAX_LONG_POLLS_PER_CALLER } from "@toolpact/contract";
import { signIn } from "./support/confirm-page.js";
import { ASSISTANT_ID, manifest, OTHER_CALLER_ID, PROVIDER_ID } from "./support/plugins.js";
import { callerHeadersOf, configureWorld, makeSecrets, startStack, type CallerHeaders, type Stack } from "./support/stack.js";
import { mintActorToken, mintPresenceToken } from "./support/tokens.js";
import { mutate, ok } from "./support/wire.js";

const WIRE_FORMAT = fileURLToPath(new URL("../../docs/wire-format.md", import.meta.url));
const TABLE_HEADING = "## Refusals, request by request";
const SEAMS_ID = "com.test.refusal-seams";
/** A tenant whose policy confirms writes on the platform's page (the test world's own confirms in token mode). */
const PLATFORM_TENANT = "t-platform";

/** What a refusal looked like on the wire. */
interface Seen {
  readonly status: number;
  /** `error.data.toolpactCode` of a JSON answer; for other answers, what kind of body it was. */
  readonly code: string;
}

/** One row of the doc's table. */
interface Row {
  readonly request: string;
  readonly status: number;
  readonly code: string;
}

let dir: string;
let stack: Stack;
let as: CallerHeaders;
/** The assistant's plugin key in the platform-mode tenant, as a header. */
let platformCaller: Record<string, string>;
const secrets = makeSecrets();

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-refusals-"));
  stack = await startStack({
    dbFile: path.join(dir, "toolpact.db"),
    secrets,
    publicUrl: "self",
    setup: (runtime) => {
      runtime.registerPlugin(
        manifest({
          id: SEAMS_ID,
          version: "1.0.0",
          permissions: ["tools:gate"],
          gates: [{ name: "business-hours", appliesTo: [`${PROVIDER_ID}:*`] }],
        }),
      );
      runtime.sdkFor(SEAMS_ID).gates.provide("business-hours", () => ({ decision: "allow" }));
    },
  });
  const keys = await configureWorld(stack);
  as = callerHeadersOf(keys, secrets.actorSecret);
  for (const pluginId of [PROVIDER_ID, ASSISTANT_ID]) await stack.admin("installPlugin", { tenantId: PLATFORM_TENANT, pluginId });
  await stack.admin("setPolicy", {
    tenantId: PLATFORM_TENANT,
    policy: { rules: [{ tools: `${PROVIDER_ID}:*`, decision: "confirm", mode: "platform" }] },
  });
  const platformKey = await stack.admin<{ key: string }>("issuePluginKey", { tenantId: PLATFORM_TENANT, pluginId: ASSISTANT_ID });
  platformCaller = { authorization: `Bearer ${platformKey.key}` };
});

afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Headers of the assistant in the platform-mode tenant, acting for `userId`. */
async function platformHeaders(userId = "user-1"): Promise<Record<string, string>> {
  return { ...platformCaller, "x-toolpact-actor": await mintActorToken(secrets.actorSecret, { tid: PLATFORM_TENANT, sub: userId }) };
}

/** A pending platform-mode confirmation request of `userId` (default user-1) in the platform tenant. */
async function pendingRequest(userId?: string): Promise<string> {
  const preview = ok<{ confirmation: { requestId: string } }>(
    await mutate(
      stack.url,
      "tools.preview",
      { ref: { providerId: PROVIDER_ID, tool: "create-note" }, input: { title: "pending" } },
      await platformHeaders(userId),
    ),
  );
  return preview.confirmation.requestId;
}

/** A raw HTTP exchange, for requests fetch will not make (a declared length, a method, no body). */
function raw(options: {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}): Promise<{ status: number; type: string; text: string }> {
  const url = new URL(stack.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method: options.method, path: options.path, headers: options.headers ?? {} }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? ""), text }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/**
 * What a response shows: its status and toolpactCode when the body is a JSON error (whatever its
 * content type says), else `HTML page` or `plain text`.
 */
function seen(response: { status: number; type: string; text: string }): Seen {
  if (response.type.startsWith("text/html")) return { status: response.status, code: "HTML page" };
  let body: { error?: { data?: { toolpactCode?: string } } } | undefined;
  try {
    body = JSON.parse(response.text) as typeof body;
  } catch {
    return { status: response.status, code: response.type.startsWith("text/plain") ? "plain text" : `(${response.type})` };
  }
  return { status: response.status, code: body?.error?.data?.toolpactCode ?? "(no toolpactCode)" };
}

function json(method: string, procedure: string, body: unknown, headers: Record<string, string> = {}) {
  return raw({ method, path: `/trpc/${procedure}`, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

function get(procedure: string, input: unknown, headers: Record<string, string> = {}) {
  const search = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  return raw({ method: "GET", path: `/trpc/${procedure}${search}`, headers });
}

const createNote = { ref: { providerId: PROVIDER_ID, tool: "create-note" }, input: { title: "Q3 plan" } };

/** Every request the table names, by the exact text of its first column. */
const REQUESTS: Record<string, () => Promise<Seen>> = {
  "a caller procedure without a plugin key or actor token": async () => seen(await get("tools.list", undefined)),
  "an actor token of another tenant than the plugin key's": async () => seen(await get("tools.list", undefined, await as(ASSISTANT_ID, { tid: "t2" }))),
  "an admin procedure with a plugin key, or without the admin key": async () =>
    seen(await get("admin.listActivity", { tenantId: "t1" }, await as(ASSISTANT_ID))),
  "an unknown procedure (`/trpc/tools.previwe`)": async () => seen(await json("POST", "tools.previwe", createNote, await as(ASSISTANT_ID))),
  "a mutation sent as `GET`": async () => seen(await get("tools.preview", createNote, await as(ASSISTANT_ID))),
  "a query sent as `POST`": async () => seen(await json("POST", "tools.list", {}, await as(ASSISTANT_ID))),
  "a batch (`?batch=1`)": async () =>
    seen(await raw({ method: "POST", path: "/trpc/tools.preview,tools.execute?batch=1", headers: { "content-type": "application/json" }, body: "{}" })),
  "a body over `limits.maxBodyBytes` (declared in `content-length`)": async () => {
    const body = Buffer.alloc(1024 * 1024 + 1, 0x20);
    return seen(
      await raw({ method: "POST", path: "/trpc/tools.preview", headers: { "content-type": "application/json", "content-length": String(body.length) }, body }),
    );
  },
  "a body over `limits.maxBodyBytes` (chunked, no length)": async () => {
    const body = Buffer.concat([Buffer.from('{"input":"'), Buffer.alloc(1024 * 1024, 0x61), Buffer.from('"}')]);
    return seen(
      await raw({
        method: "POST",
        path: "/trpc/tools.preview",
        headers: { "content-type": "application/json", "transfer-encoding": "chunked", ...(await as(ASSISTANT_ID)) },
        body,
      }),
    );
  },
  "a body nested deeper than `limits.maxInputDepth` + 8 (at least 128), refused while it streams in": async () => {
    const body = `{"ref":{"providerId":"${PROVIDER_ID}","tool":"create-note"},"input":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    return seen(await raw({ method: "POST", path: "/trpc/tools.preview", headers: { "content-type": "application/json", ...(await as(ASSISTANT_ID)) }, body }));
  },
  "`PUT`, `DELETE`, `OPTIONS` or another method than `GET` and `POST` on `/trpc/` (with `Allow: GET, POST`)": async () =>
    seen(await json("PUT", "tools.preview", createNote, await as(ASSISTANT_ID))),
  "an input sent to a procedure that takes none (`tools.list`, `tools.manifests`)": async () =>
    seen(await get("tools.manifests", { tenantId: "t2" }, await as(ASSISTANT_ID))),
  "a caller past `limits.maxLongPollsPerCaller` (or `maxRequestsPerCaller`) at once, with `Retry-After`": async () => {
    const requestId = await pendingRequest();
    const headers = await platformHeaders();
    const stop = new AbortController();
    const wait = `${stack.url}/trpc/confirmations.wait?input=${encodeURIComponent(JSON.stringify({ requestId, timeoutMs: 20_000 }))}`;
    const held = Array.from({ length: DEFAULT_MAX_LONG_POLLS_PER_CALLER }, () => fetch(wait, { headers, signal: stop.signal }).catch(() => undefined));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const excess = await get("confirmations.wait", { requestId, timeoutMs: 20_000 }, headers);
    stop.abort();
    await Promise.all(held);
    return seen(excess);
  },
  "a body that is not `application/json`": async () =>
    seen(
      await raw({
        method: "POST",
        path: "/trpc/tools.preview",
        headers: { "content-type": "text/plain", ...(await as(ASSISTANT_ID)) },
        body: JSON.stringify(createNote),
      }),
    ),
  "a body that is not JSON": async () =>
    seen(
      await raw({
        method: "POST",
        path: "/trpc/tools.preview",
        headers: { "content-type": "application/json", ...(await as(ASSISTANT_ID)) },
        body: "{not json",
      }),
    ),
  "a body with a field the procedure does not take (`tenantId`, `actor`, ...)": async () =>
    seen(await json("POST", "tools.preview", { ...createNote, tenantId: "t2" }, await as(ASSISTANT_ID))),
  'an id of the wrong shape (`operationId: "op 1"`)': async () => seen(await get("tools.operation", { operationId: "op 1" }, await as(ASSISTANT_ID))),
  "`confirmations.wait` with `timeoutMs` over 25000": async () =>
    seen(await get("confirmations.wait", { requestId: "r1", timeoutMs: 25_001 }, await as(ASSISTANT_ID))),
  "`runs.open` with `ttlSeconds` 0 or over 604800": async () =>
    seen(await json("POST", "runs.open", { allow: ["*"], ttlSeconds: 604_801 }, await as(ASSISTANT_ID))),
  "`tools.operation` of an operation another caller or user started": async () => {
    const { operationId } = ok<{ operationId: string }>(
      await mutate(stack.url, "tools.execute", { ref: { providerId: PROVIDER_ID, tool: "list-notes" }, input: {} }, await as(ASSISTANT_ID)),
    );
    return seen(await get("tools.operation", { operationId }, await as(OTHER_CALLER_ID)));
  },
  "`confirmations.get`, `wait` or `cancel` of another caller's or user's request": async () => {
    const requestId = await pendingRequest();
    return seen(await get("confirmations.get", { requestId }, await platformHeaders("user-2")));
  },
  "`runs.close` of another caller's or user's run": async () => {
    const { runId } = ok<{ runId: string }>(await mutate(stack.url, "runs.open", { allow: ["*"], ttlSeconds: 60 }, await as(ASSISTANT_ID)));
    return seen(await json("POST", "runs.close", { runId }, await as(OTHER_CALLER_ID)));
  },
  "a call with a run of another caller, or a closed or expired run": async () => {
    const { runId } = ok<{ runId: string }>(await mutate(stack.url, "runs.open", { allow: ["*"], ttlSeconds: 60 }, await as(ASSISTANT_ID)));
    return seen(await json("POST", "tools.execute", { ref: { providerId: PROVIDER_ID, tool: "list-notes" }, input: {}, runId }, await as(OTHER_CALLER_ID)));
  },
  "`confirmations.approve` or `deny` carrying a plugin key or actor token": async () => {
    const requestId = await pendingRequest();
    return seen(await json("POST", "confirmations.approve", { requestId }, await platformHeaders()));
  },
  "`confirmations.approve` or `deny` without a confirmation-page session": async () => {
    const requestId = await pendingRequest();
    return seen(await json("POST", "confirmations.approve", { requestId }));
  },
  "`confirmations.approve` or `deny` with a session but without its CSRF token": async () => {
    const requestId = await pendingRequest();
    const session = await signIn(stack.url, secrets.actorSecret, { tid: PLATFORM_TENANT });
    return seen(await json("POST", "confirmations.approve", { requestId }, { cookie: session.cookie }));
  },
  "`confirmations.approve` or `deny` by a user the request is not for": async () => {
    const requestId = await pendingRequest();
    const session = await signIn(stack.url, secrets.actorSecret, { tid: PLATFORM_TENANT, sub: "user-2" });
    const csrf = await csrfOf(session.cookie, await pendingRequest("user-2"));
    return seen(await json("POST", "confirmations.approve", { requestId }, { cookie: session.cookie, "x-toolpact-csrf": csrf }));
  },
  "`confirmations.approve` or `deny` that another site posted (`Sec-Fetch-Site: cross-site`)": async () => {
    const requestId = await pendingRequest();
    const session = await signIn(stack.url, secrets.actorSecret, { tid: PLATFORM_TENANT });
    const csrf = await csrfOf(session.cookie, requestId);
    return seen(
      await json("POST", "confirmations.approve", { requestId }, { cookie: session.cookie, "x-toolpact-csrf": csrf, "sec-fetch-site": "cross-site" }),
    );
  },
  "the page's Approve form posted by another site (`POST /confirm/<id>/approve`, `Sec-Fetch-Site: cross-site`)": async () => {
    const requestId = await pendingRequest();
    const session = await signIn(stack.url, secrets.actorSecret, { tid: PLATFORM_TENANT });
    const csrf = await csrfOf(session.cookie, requestId);
    return seen(
      await raw({
        method: "POST",
        path: `/confirm/${requestId}/approve`,
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: session.cookie, "sec-fetch-site": "cross-site" },
        body: new URLSearchParams({ csrf }).toString(),
      }),
    );
  },
  "a sign-in (`/confirm/session`) that another site posted or framed": async () => {
    const token = await mintPresenceToken(secrets.actorSecret, { tid: PLATFORM_TENANT });
    return seen(
      await raw({
        method: "POST",
        path: "/confirm/session",
        headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" },
        body: new URLSearchParams({ token }).toString(),
      }),
    );
  },
  "a presence token used a second time": async () => {
    const token = await mintPresenceToken(secrets.actorSecret, { tid: PLATFORM_TENANT });
    await raw({ method: "GET", path: `/confirm/session?token=${encodeURIComponent(token)}` });
    return seen(await raw({ method: "GET", path: `/confirm/session?token=${encodeURIComponent(token)}` }));
  },
  "`admin.setActivation` naming a gate, hook or guard the plugin does not declare": async () =>
    seen(await json("POST", "admin.setActivation", { tenantId: "t1", pluginId: SEAMS_ID, gates: ["closing-time"] }, adminHeaders())),
  "`admin.setActivation` (or `installPlugin`, ...) of a plugin this host has not loaded": async () =>
    seen(await json("POST", "admin.setActivation", { tenantId: "t1", pluginId: "com.test.nowhere", gates: [] }, adminHeaders())),
  "a path outside `/trpc/`, `/mcp`, `/confirm/`, `/healthz`, `/readyz`": async () => seen(await raw({ method: "GET", path: "/status" })),
  "`POST /healthz` or `/readyz`": async () => seen(await raw({ method: "POST", path: "/healthz" })),
};

function adminHeaders(): Record<string, string> {
  return { authorization: `Bearer ${secrets.adminKey}` };
}

/** The CSRF token of a session, as the confirmation page embeds it in the form of a request of the session's user. */
async function csrfOf(cookie: string, requestId: string): Promise<string> {
  const page = await raw({ method: "GET", path: `/confirm/${requestId}`, headers: { cookie } });
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1];
  if (csrf === undefined) throw new Error(`the confirmation page shows no form: HTTP ${page.status}`);
  return csrf;
}

/** The rows of the doc's table of refusals. */
function tableRows(): Row[] {
  const text = readFileSync(WIRE_FORMAT, "utf8");
  const start = text.indexOf(`\n${TABLE_HEADING}\n`);
  if (start < 0) throw new Error(`docs/wire-format.md has no "${TABLE_HEADING}" section`);
  const section = text.slice(start + TABLE_HEADING.length + 2).split(/\n## /)[0]!;
  const lines = section.split("\n").filter((line) => line.startsWith("|"));
  const [header, rule, ...body] = lines;
  expect(header).toBe("| request | HTTP | toolpactCode |");
  expect(rule).toMatch(/^\|( --- \|){3}$/);
  return body.map((line) => {
    const cells = line
      .slice(1, -1)
      .split(" | ")
      .map((cell) => cell.trim());
    if (cells.length !== 3) throw new Error(`docs/wire-format.md: a row of the table of refusals has ${cells.length} cells: ${line}`);
    const [request, status, code] = cells as [string, string, string];
    return { request, status: Number(status), code: code.replace(/^`|`$/g, "") };
  });
}

describe("docs/wire-format.md: refusals, request by request", () => {
  const rows = tableRows();

  it("has a row for every request this test makes, and a request for every row", () => {
    expect(rows.map((row) => row.request).sort()).toEqual(Object.keys(REQUESTS).sort());
  });

  for (const row of rows) {
    it(`${row.request}: HTTP ${row.status}, ${row.code}`, async () => {
      const make = REQUESTS[row.request];
      if (make === undefined) throw new Error(`no request for the row "${row.request}"`);
      expect(await make()).toEqual({ status: row.status, code: row.code });
    });
  }
});

describe("docs/wire-format.md: a retry with an idempotency key and a used token", () => {
  it("answers the recorded outcome: the key is looked up before the token", async () => {
    const headers = await as(ASSISTANT_ID);
    const preview = ok<{ confirmation: { token: string } }>(await mutate(stack.url, "tools.preview", createNote, headers));
    const call = { ...createNote, confirmationToken: preview.confirmation.token, idempotencyKey: "retry-1" };
    const first = ok<{ operationId: string; result: unknown }>(await mutate(stack.url, "tools.execute", call, headers));
    const again = ok<{ operationId: string; result: unknown }>(await mutate(stack.url, "tools.execute", call, headers));
    expect(again).toEqual(first);
    expect(stack.probe.invocations.get("create-note")).toBe(1);
    const otherKey = await mutate(stack.url, "tools.execute", { ...call, idempotencyKey: "retry-2" }, headers);
    expect({ status: otherKey.status, code: otherKey.body.error?.data.toolpactCode }).toEqual({ status: 409, code: "CONFIRMATION_USED" });
    const otherInput = await mutate(stack.url, "tools.execute", { ...call, input: { title: "Q4 plan" } }, headers);
    expect({ status: otherInput.status, code: otherInput.body.error?.data.toolpactCode }).toEqual({ status: 409, code: "IDEMPOTENCY_CONFLICT" });
  });

  it("still runs steps 2 to 7 first: a retry the policy no longer allows is refused", async () => {
    const headers = await as(ASSISTANT_ID);
    const preview = ok<{ confirmation: { token: string } }>(await mutate(stack.url, "tools.preview", createNote, headers));
    const call = { ...createNote, confirmationToken: preview.confirmation.token, idempotencyKey: "retry-3" };
    ok(await mutate(stack.url, "tools.execute", call, headers));
    await stack.admin("setPluginEnabled", { tenantId: "t1", pluginId: ASSISTANT_ID, enabled: false });
    try {
      const refused = await mutate(stack.url, "tools.execute", call, headers);
      expect({ status: refused.status, code: refused.body.error?.data.toolpactCode }).toEqual({ status: 403, code: "CALLER_DISABLED" });
    } finally {
      await stack.admin("setPluginEnabled", { tenantId: "t1", pluginId: ASSISTANT_ID, enabled: true });
    }
  });

  it("a token sent with a call that needs none is ignored, not consumed", async () => {
    const headers = await as(ASSISTANT_ID);
    const preview = ok<{ confirmation: { token: string } }>(await mutate(stack.url, "tools.preview", createNote, headers));
    const read = await mutate(
      stack.url,
      "tools.execute",
      { ref: { providerId: PROVIDER_ID, tool: "list-notes" }, input: {}, confirmationToken: preview.confirmation.token },
      headers,
    );
    expect(read.status).toBe(200);
    ok(await mutate(stack.url, "tools.execute", { ...createNote, confirmationToken: preview.confirmation.token }, headers));
  });
});
