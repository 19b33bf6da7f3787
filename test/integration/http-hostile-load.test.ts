/**
 * One hostile caller against a real server: bodies nested 400k deep are refused while they stream in
 * (on /trpc and /mcp), so /healthz keeps answering while eight are in flight; /mcp answers an oversized
 * declared body with a readable 413 as /trpc does; and a caller past its bound on requests in flight or
 * long polls gets RATE_LIMITED with Retry-After while another caller keeps getting answers.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ASSISTANT_ID, OTHER_CALLER_ID, PROVIDER_ID } from "./support/plugins.js";
import { callerHeadersOf, configureWorld, makeSecrets, startStack, type CallerHeaders, type Stack, type StackOptions } from "./support/stack.js";
import { mutate, query } from "./support/wire.js";

const DEEP = 400_000;
const deepBody = (envelope: (inner: string) => string) => envelope(`${"[".repeat(DEEP)}${"]".repeat(DEEP)}`);
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

let dir: string;
const secrets = makeSecrets();
const stacks: Stack[] = [];

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-hostile-"));
});

afterAll(async () => {
  for (const stack of stacks) await stack.close();
  rmSync(dir, { recursive: true, force: true });
});

async function world(name: string, bounds?: StackOptions["bounds"]): Promise<{ stack: Stack; headers: CallerHeaders }> {
  const stack = await startStack({ dbFile: path.join(dir, `${name}.db`), secrets, ...(bounds === undefined ? {} : { bounds }) });
  stacks.push(stack);
  const keys = await configureWorld(stack);
  return { stack, headers: callerHeadersOf(keys, secrets.actorSecret) };
}

async function timed<T>(work: () => Promise<T>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

async function healthz(url: string): Promise<void> {
  const response = await fetch(`${url}/healthz`);
  expect(response.status).toBe(200);
  await response.text();
}

describe("a body nested 400k deep", () => {
  it("is refused on /trpc as INPUT_INVALID naming the limit, before authentication or any parse", async () => {
    const { stack, headers } = await world("deep-trpc");
    const body = deepBody((inner) => JSON.stringify({ ref: { providerId: PROVIDER_ID, tool: "list-notes" }, input: "@" }).replace('"@"', inner));
    expect(body.length).toBeGreaterThan(800_000);
    for (const sent of [await headers(ASSISTANT_ID), {}]) {
      const response = await fetch(`${stack.url}/trpc/tools.execute`, { method: "POST", headers: { "content-type": "application/json", ...sent }, body });
      expect(response.status).toBe(400);
      const answer = (await response.json()) as { error: { message: string; data: Record<string, unknown> } };
      expect(answer.error.data).toMatchObject({ code: "BAD_REQUEST", toolpactCode: "INPUT_INVALID", path: "tools.execute" });
      expect(answer.error.message).toBe("request body is nested more than 128 levels deep (the server's limit): flatten the input");
    }
    expect(stack.runtime.metrics.authFailures).toBe(0);
    // In a query's input too.
    const deepQuery = await query(stack.url, "tools.operation", JSON.parse(`${"[".repeat(200)}${"]".repeat(200)}`), await headers(ASSISTANT_ID));
    expect(deepQuery.status).toBe(400);
    expect(deepQuery.body.error?.message).toMatch(/nested more than 128 levels/);
  });

  it("is refused on /mcp as a JSON-RPC error naming the limit", async () => {
    const { stack, headers } = await world("deep-mcp");
    const body = deepBody((inner) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":${inner}}}}`);
    const response = await fetch(`${stack.url}/mcp`, { method: "POST", headers: { ...MCP_HEADERS, ...(await headers(ASSISTANT_ID)) }, body });
    expect(response.status).toBe(400);
    const answer = (await response.json()) as { error: { code: number; message: string } };
    expect(answer.error.message).toBe("request body is nested more than 128 levels deep (the server's limit): flatten the input");
  });

  it("leaves /healthz answering while eight are in flight, as eight flat bodies of the same size do", { timeout: 90_000 }, async () => {
    const { stack, headers } = await world("deep-parallel");
    const sent = { "content-type": "application/json", ...(await headers(ASSISTANT_ID)) };
    const envelope = (inner: string) => `{"ref":{"providerId":"${PROVIDER_ID}","tool":"list-notes"},"input":${inner}}`;
    const deep = new TextEncoder().encode(deepBody(envelope));
    const flat = new TextEncoder().encode(envelope(`[${"0,".repeat(DEEP - 2)}0`.padEnd(2 * DEEP - 1, " ") + "]"));
    expect(flat.length).toBe(deep.length);
    /** The worst /healthz latency while eight copies of `body` are in flight, and their statuses. */
    const underLoad = async (body: Uint8Array): Promise<{ worst: number; statuses: number[]; seen: number[] }> => {
      let inFlight = true;
      const calls = Promise.all(
        Array.from({ length: 8 }, () => fetch(`${stack.url}/trpc/tools.execute`, { method: "POST", headers: sent, body }).then((r) => r.status)),
      ).finally(() => {
        inFlight = false;
      });
      const seen: number[] = [];
      for (let i = 0; i < 20 && (inFlight || seen.length < 3); i++) seen.push(await timed(() => healthz(stack.url)));
      return { worst: Math.max(...seen), statuses: await calls, seen: seen.map(Math.round) };
    };
    await underLoad(flat); // warm-up: connections, JIT
    const flatLoad = await underLoad(flat);
    const deepLoad = await underLoad(deep);
    expect(deepLoad.statuses).toEqual(Array(8).fill(400));
    // Before the bound, each deep body blocked the event loop ~1 s and /healthz took seconds. Client and
    // server share this process and a busy machine, so compare with flat bodies of the same size, loosely.
    expect(deepLoad.worst, `flat ${flatLoad.seen} ms, deep ${deepLoad.seen} ms`).toBeLessThan(Math.max(flatLoad.worst * 3, flatLoad.worst + 300));
  });
});

describe("an oversized declared body on /mcp", () => {
  it("gets a readable 413 JSON answer, like /trpc, with no early close under a client still sending", async () => {
    const { stack, headers } = await world("mcp-413");
    const limit = 1024 * 1024;
    const auth = await headers(ASSISTANT_ID);
    for (const target of ["/mcp", "/trpc/tools.execute"]) {
      const { status, body, clientError } = await new Promise<{ status: number; body: string; clientError: unknown }>((resolve) => {
        let clientError: unknown;
        const req = httpRequest(`${stack.url}${target}`, {
          method: "POST",
          headers: { ...MCP_HEADERS, ...auth, "content-length": String(limit * 2) },
        });
        req.on("error", (error) => {
          clientError = error;
        });
        req.on("response", (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), clientError }));
        });
        // Send the whole declared body in 64 KiB pieces, as a client that does not look at the answer first.
        const piece = Buffer.alloc(64 * 1024, 0x20);
        let sent = 0;
        const pump = (): void => {
          while (sent < limit * 2) {
            sent += piece.length;
            if (!req.write(piece)) return void req.once("drain", pump);
          }
          req.end();
        };
        pump();
      });
      expect(clientError, target).toBeUndefined();
      expect(status, target).toBe(413);
      const answer = JSON.parse(body) as { error: { message: string } };
      expect(answer.error.message, target).toBe(`request body is larger than the server's limit of ${limit} bytes: send a smaller input`);
    }
  });
});

describe("per-caller bounds", () => {
  it("refuses a caller's long polls past its bound with 429 and Retry-After; its other requests and other callers go on", { timeout: 30_000 }, async () => {
    const { stack, headers } = await world("long-polls", { maxLongPollsPerCaller: 3 });
    await stack.admin("setPolicy", { tenantId: "t1", policy: { rules: [{ tools: "com.test.*", effects: ["write"], decision: "confirm", mode: "platform" }] } });
    const requestOf = async (caller: string) => {
      const sent = await headers(caller);
      const preview = await mutate(stack.url, "tools.preview", { ref: { providerId: PROVIDER_ID, tool: "create-note" }, input: { title: "t" } }, sent);
      const data = preview.body.result?.data as { confirmation: { requestId: string } };
      return { sent, requestId: data.confirmation.requestId };
    };
    const hog = await requestOf(ASSISTANT_ID);
    const waitUrl = (requestId: string, timeoutMs: number) =>
      `${stack.url}/trpc/confirmations.wait?input=${encodeURIComponent(JSON.stringify({ requestId, timeoutMs }))}`;
    const stop = new AbortController();
    const held = Array.from({ length: 3 }, () => fetch(waitUrl(hog.requestId, 20_000), { headers: hog.sent, signal: stop.signal }).catch(() => "aborted"));
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (let i = 0; i < 2; i++) {
      const excess = await fetch(waitUrl(hog.requestId, 20_000), { headers: hog.sent });
      expect(excess.status).toBe(429);
      expect(excess.headers.get("retry-after")).toBe("1");
      const answer = (await excess.json()) as { error: { message: string; data: Record<string, unknown> } };
      expect(answer.error.data).toMatchObject({ toolpactCode: "RATE_LIMITED", toolpactData: { retryAfterMs: 1000 }, path: "confirmations.wait" });
      expect(answer.error.message).toMatchInlineSnapshot(
        `"this caller already has 3 long polls open, the most one plugin key may hold at once: retry after 1 s, once some have finished (the server's "limits.maxLongPollsPerCaller" in toolpact.config.json)"`,
      );
    }
    // The same caller's ordinary requests are counted apart; another caller's long poll is answered.
    expect((await query(stack.url, "tools.list", undefined, hog.sent)).status).toBe(200);
    const other = await requestOf(OTHER_CALLER_ID);
    const otherWait = await fetch(waitUrl(other.requestId, 50), { headers: other.sent });
    expect(otherWait.status).toBe(200);
    expect(((await otherWait.json()) as { result: { data: { status: string } } }).result.data.status).toBe("pending");
    // A closed poll frees its slot.
    stop.abort();
    await Promise.all(held);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await fetch(waitUrl(hog.requestId, 50), { headers: hog.sent })).status).toBe(200);
  });

  it("refuses a caller's requests in flight past its bound with 429 and Retry-After, before reading their bodies", { timeout: 30_000 }, async () => {
    const { stack, headers } = await world("in-flight", { maxRequestsPerCaller: 2 });
    const sent = await headers(ASSISTANT_ID);
    const slow = () => mutate(stack.url, "tools.execute", { ref: { providerId: PROVIDER_ID, tool: "slow-read" }, input: {} }, sent);
    const first = [slow(), slow()];
    await new Promise((resolve) => setTimeout(resolve, 100));
    const excess = await slow();
    expect(excess.status).toBe(429);
    expect(excess.body.error?.data).toMatchObject({ toolpactCode: "RATE_LIMITED" });
    expect(excess.body.error?.message).toMatch(/already has 2 requests in flight.*"limits\.maxRequestsPerCaller"/);
    const other = await mutate(stack.url, "tools.execute", { ref: { providerId: PROVIDER_ID, tool: "slow-read" }, input: {} }, await headers(OTHER_CALLER_ID));
    expect(other.status).toBe(200);
    expect((await Promise.all(first)).map((r) => r.status)).toEqual([200, 200]);
    expect((await slow()).status).toBe(200);
  });
});
