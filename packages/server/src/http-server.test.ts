import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createRuntime, createSqliteStore, type ToolpactRuntime } from "@toolpact/runtime";
import { createToolpactServer, type ToolpactServer } from "./http-server.js";

const opened: { server: ToolpactServer }[] = [];

afterEach(async () => {
  for (const { server } of opened.splice(0)) await server.close();
});

async function runtime(): Promise<ToolpactRuntime> {
  return createRuntime({
    store: await createSqliteStore({ path: ":memory:" }),
    signingKeys: [{ kid: "k1", key: new Uint8Array(randomBytes(32)) }],
    storageKey: new Uint8Array(randomBytes(32)),
    actorTokens: { issuer: "https://id.example", secret: new Uint8Array(randomBytes(32)) },
  });
}

async function server(options: { maxBodyBytes?: number } = {}): Promise<ToolpactServer> {
  const created = createToolpactServer({ runtime: await runtime(), adminKey: randomBytes(32).toString("base64url"), port: 0, ...options });
  opened.push({ server: created });
  await created.listen();
  return created;
}

describe("createToolpactServer", () => {
  it("listens on 127.0.0.1 by default and reports its URL once listening", async () => {
    const created = createToolpactServer({ runtime: await runtime(), adminKey: undefined, port: 0 });
    opened.push({ server: created });
    expect(() => created.url).toThrow(/not listening yet/);
    const url = await created.listen();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await created.listen()).toBe(url);
    expect(created.url).toBe(url);
  });

  it("answers health checks with GET or HEAD only, and 404 outside its routes", async () => {
    const { url } = await server();
    expect((await fetch(`${url}/healthz`, { method: "HEAD" })).status).toBe(200);
    const post = await fetch(`${url}/healthz`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    const missing = await fetch(`${url}/trpcx`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("answers an unknown procedure with tRPC's NOT_FOUND, a toolpact code and a near procedure's name", async () => {
    const { url } = await server();
    const response = await fetch(`${url}/trpc/tools.nothing`);
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { message: string; data: Record<string, unknown> } };
    expect(body.error.data).toMatchObject({ code: "NOT_FOUND", toolpactCode: "INPUT_INVALID", path: "tools.nothing" });
    const typo = (await (await fetch(`${url}/trpc/tools.previw`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).json()) as {
      error: { message: string };
    };
    expect(typo.error.message).toBe('no such procedure "tools.previw" on this server; did you mean "tools.preview"?');
  });

  it("answers a wrong HTTP method with 405 and a toolpact code", async () => {
    const { url } = await server();
    for (const [path, method] of [
      ["tools.preview", "GET"],
      ["tools.list", "POST"],
    ] as const) {
      const response = await fetch(
        `${url}/trpc/${path}`,
        method === "POST" ? { method, headers: { "content-type": "application/json" }, body: "{}" } : { method },
      );
      expect(response.status, path).toBe(405);
      const body = (await response.json()) as { error: { message: string; data: Record<string, unknown> } };
      expect(body.error.data, path).toMatchObject({ code: "METHOD_NOT_SUPPORTED", toolpactCode: "INPUT_INVALID" });
      expect(body.error.message).toMatch(/queries use GET, mutations POST/);
    }
  });

  it("lets an ordinary fetch client read the 413 of a body far over the limit (no reset while it still sends)", async () => {
    const { url } = await server({ maxBodyBytes: 2048 });
    for (const size of [64 * 1024, 8 * 1024 * 1024]) {
      const response = await fetch(`${url}/trpc/tools.preview`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ref: { providerId: "a.b", tool: "c" }, input: "x".repeat(size) }),
      });
      expect(response.status, String(size)).toBe(413);
      expect(((await response.json()) as { error: { data: Record<string, unknown> } }).error.data.toolpactCode).toBe("INPUT_INVALID");
    }
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it("refuses an oversized body by its declared length before reading it", async () => {
    const { url } = await server({ maxBodyBytes: 2048 });
    const response = await fetch(`${url}/trpc/tools.execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ref: { providerId: "a", tool: "b" }, input: "x".repeat(4096) }),
    });
    expect(response.status).toBe(413);
    expect(response.headers.get("connection")).toBe("close");
    const body = (await response.json()) as { error: { data: Record<string, unknown> } };
    expect(body.error.data).toMatchObject({ code: "PAYLOAD_TOO_LARGE", toolpactCode: "INPUT_INVALID", path: "tools.execute" });
  });

  it("answers methods /trpc does not serve with 405 and Allow, as a JSON INPUT_INVALID", async () => {
    const { url } = await server();
    for (const method of ["PUT", "DELETE", "OPTIONS", "PATCH", "HEAD"]) {
      const response = await fetch(`${url}/trpc/tools.execute`, {
        method,
        headers: { "content-type": "application/json" },
        ...(method === "PUT" || method === "PATCH" ? { body: "{}" } : {}),
      });
      expect(response.status, method).toBe(405);
      expect(response.headers.get("allow"), method).toBe("GET, POST");
      if (method === "HEAD") continue;
      const body = (await response.json()) as { error: { message: string; data: Record<string, unknown> } };
      expect(body.error.data).toMatchObject({ code: "METHOD_NOT_SUPPORTED", toolpactCode: "INPUT_INVALID", path: "tools.execute" });
      expect(body.error.message).toBe(`method ${method} is not allowed here: queries use GET, mutations POST`);
    }
  });

  it("refuses a call whose body is not JSON with a JSON 415 that names the procedure, before authentication", async () => {
    const rt = await runtime();
    const created = createToolpactServer({ runtime: rt, adminKey: undefined, port: 0 });
    opened.push({ server: created });
    const url = await created.listen();
    const body = JSON.stringify({ ref: { providerId: "a.b", tool: "c" }, input: {} });
    const headers = { authorization: "Bearer tpk_nope", "x-toolpact-actor": "nope" };
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/jsonx", undefined]) {
      const response = await fetch(`${url}/trpc/tools.execute`, {
        method: "POST",
        headers: type === undefined ? headers : { ...headers, "content-type": type },
        body: type === undefined ? new Blob([body]) : body,
      });
      expect(response.status, String(type)).toBe(415);
      expect(response.headers.get("content-type")).toBe("application/json");
      const answer = (await response.json()) as { error: { message: string; data: Record<string, unknown> } };
      expect(answer.error.data).toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE", toolpactCode: "INPUT_INVALID", path: "tools.execute" });
      expect(answer.error.message).toMatch(/^calls take a JSON body: send "content-type: application\/json"/);
    }
    expect(rt.metrics.authFailures).toBe(0);
    // JSON with parameters is JSON.
    const json = await fetch(`${url}/trpc/tools.execute`, { method: "POST", headers: { ...headers, "content-type": "application/json; charset=utf-8" }, body });
    expect(json.status).toBe(401);
  });

  it("answers an unexpected failure with a 500 that carries OUTCOME_UNKNOWN and nothing of its cause", async () => {
    const rt = await runtime();
    // The runtime as it is, except that authentication fails the way a bug would.
    const broken = new Proxy(rt, {
      get: (target, key) => {
        if (key === "authenticate") return () => Promise.reject(new RangeError("canary-internal-7731"));
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const created = createToolpactServer({ runtime: broken, adminKey: undefined, port: 0 });
    opened.push({ server: created });
    const url = await created.listen();
    const response = await fetch(`${url}/trpc/tools.execute`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer tpk_x", "x-toolpact-actor": "x" },
      body: JSON.stringify({ ref: { providerId: "a.b", tool: "c" }, input: {} }),
    });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toMatch(/canary-internal-7731|RangeError/);
    const body = JSON.parse(text) as { error: { message: string; data: Record<string, unknown> } };
    expect(body.error.data).toMatchObject({ code: "INTERNAL_SERVER_ERROR", toolpactCode: "OUTCOME_UNKNOWN", path: "tools.execute" });
    expect(body.error.message).toMatch(/^internal server error: .* whether it had an effect is unknown/);
  });

  it("refuses a batched request before any of its calls runs", async () => {
    const rt = await runtime();
    const created = createToolpactServer({ runtime: rt, adminKey: undefined, port: 0 });
    opened.push({ server: created });
    const url = await created.listen();
    const calls = ["tools.execute", "tools.execute", "tools.execute"];
    const batched = await fetch(`${url}/trpc/${calls.join(",")}?batch=1`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer tpk_nope", "x-toolpact-actor": "nope" },
      body: JSON.stringify(Object.fromEntries(calls.map((_, i) => [i, { ref: { providerId: "a.b", tool: "c" }, input: {} }]))),
    });
    expect(batched.status).toBe(400);
    const body = (await batched.json()) as { error: { message: string; data: Record<string, unknown> } };
    expect(body.error.message).toMatch(/^batched requests are not accepted: send one call per request/);
    expect(body.error.data).toMatchObject({ code: "BAD_REQUEST", toolpactCode: "INPUT_INVALID" });
    // Long polls cannot be bundled either, by GET or by any spelling of the flag.
    const polls = Array.from({ length: 8 }, () => "confirmations.wait").join(",");
    const input = encodeURIComponent(JSON.stringify(Object.fromEntries(Array.from({ length: 8 }, (_, i) => [i, { requestId: "r" }]))));
    for (const flag of ["batch=1", "batch=true", "batch"]) {
      expect((await fetch(`${url}/trpc/${polls}?${flag}&input=${input}`)).status).toBe(400);
    }
    // Nothing reached the runtime: no call even got as far as authentication.
    expect(rt.metrics.authFailures).toBe(0);
    // One call per request still works (and here fails authentication, as it should).
    const single = await fetch(`${url}/trpc/tools.list`, { headers: { authorization: "Bearer tpk_nope", "x-toolpact-actor": "nope" } });
    expect(single.status).toBe(401);
    expect(rt.metrics.authFailures).toBe(1);
  });

  it("closes once: close is idempotent, closes the runtime, and the server cannot listen again", async () => {
    const rt = await runtime();
    const created = createToolpactServer({ runtime: rt, adminKey: undefined, port: 0 });
    const url = await created.listen();
    const first = created.close();
    expect(created.close()).toBe(first);
    await first;
    expect(await rt.ready()).toBe(false);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    await expect(created.listen()).rejects.toThrow(/closed/);
  });

  it("closes a server that never listened by closing its runtime", async () => {
    const rt = await runtime();
    await createToolpactServer({ runtime: rt, adminKey: undefined }).close();
    expect(await rt.ready()).toBe(false);
  });

  it("serves the confirmation page's routes with its security headers, and only with their methods", async () => {
    const { url } = await server();
    const id = "019b0000-0000-7000-8000-000000000000";
    const answers = [
      [await fetch(`${url}/confirm/`), 404],
      [await fetch(`${url}/confirm/${id}/publish`, { method: "POST" }), 404],
      [await fetch(`${url}/confirm/..%2Ftrpc`), 404],
      [await fetch(`${url}/confirm/${id}`, { method: "POST" }), 405],
      [await fetch(`${url}/confirm/${id}/approve`), 405],
      [await fetch(`${url}/confirm/session`, { method: "PUT" }), 405],
      [await fetch(`${url}/confirm/${id}`), 401],
    ] as const;
    for (const [response, status] of answers) {
      expect(response.status, response.url).toBe(status);
      expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(response.headers.get("x-frame-options")).toBe("DENY");
      expect(response.headers.get("cache-control")).toBe("no-store");
    }
  });

  it("takes decisions only as small url-encoded forms", async () => {
    const { url } = await server();
    const id = "019b0000-0000-7000-8000-000000000000";
    const json = await fetch(`${url}/confirm/${id}/approve`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(json.status).toBe(400);
    const large = await fetch(`${url}/confirm/${id}/approve`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `csrf=${"a".repeat(20_000)}`,
    });
    expect(large.status).toBe(400);
    const unsigned = await fetch(`${url}/confirm/${id}/approve`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "csrf=x",
    });
    expect(unsigned.status).toBe(401);
  });
});
