/**
 * Random and adversarial requests against the wire entry points that `test/integration/http-fuzz.test.ts`
 * (which covers `/trpc`) does not: `/mcp` (JSON-RPC bodies, batches, protocol versions, headers) and the
 * confirmation page (paths, query strings, cookies, forms). Every answer is an answer (no 5xx, no hang:
 * each request has a deadline), the process's heap does not grow without bound, and a good call still
 * works afterwards.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { edgeStrings, junkValues } from "../integration/support/fuzz-values.js";
import { ASSISTANT_ID } from "../integration/support/plugins.js";
import { callerHeadersOf, configureWorld, makeSecrets, startStack, type Stack } from "../integration/support/stack.js";

const RUNS = 250;
/** No single request may take longer than this. */
const DEADLINE_MS = 5_000;

let dir: string;
let stack: Stack;
let headers: Record<string, string>;
const secrets = makeSecrets();

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-wire-fuzz-"));
  stack = await startStack({ dbFile: path.join(dir, "toolpact.db"), secrets, publicUrl: "self" });
  const keys = await configureWorld(stack);
  headers = await callerHeadersOf(keys, secrets.actorSecret)(ASSISTANT_ID);
});

afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const edgeString = edgeStrings({ maxLength: 30, extra: ["..%2f..%2f", "__proto__", "x".repeat(5000), "2026-07-28", "2025-11-25", "1999-01-01"] });
const junk = junkValues(edgeString, { keys: ["__proto__", "constructor", "_meta", "arguments", "name"], width: 4 });

const method = fc.oneof(
  fc.constantFrom(
    "initialize",
    "tools/list",
    "tools/call",
    "server/discover",
    "ping",
    "notifications/initialized",
    "resources/list",
    "prompts/get",
    "tasks/get",
    "elicitation/create",
  ),
  edgeString,
);

/** One JSON-RPC message: well-shaped with junk inside, or junk altogether. */
const message = fc.oneof(
  fc.record(
    {
      jsonrpc: fc.oneof(fc.constant("2.0"), junk),
      id: fc.oneof(fc.integer(), edgeString, fc.constant(null), junk),
      method,
      params: fc.oneof(
        junk,
        fc.record({ name: fc.oneof(edgeString, fc.constantFrom("notes_create_note", "notes_list_notes")), arguments: junk, _meta: junk }, { requiredKeys: [] }),
        fc.record({ protocolVersion: edgeString, capabilities: junk, clientInfo: junk }, { requiredKeys: [] }),
        // 2026-07-28: the per-request envelope, and a retry's requestState and inputResponses.
        fc.record(
          {
            name: fc.oneof(edgeString, fc.constantFrom("com-test-notes_create_note", "com-test-notes_list_notes")),
            arguments: junk,
            requestState: fc.oneof(edgeString, junk, fc.constant("tp1.e30.AAAA")),
            inputResponses: junk,
            _meta: fc.record(
              {
                "io.modelcontextprotocol/protocolVersion": fc.oneof(fc.constantFrom("2026-07-28", "2099-01-01", "2025-11-25"), edgeString),
                "io.modelcontextprotocol/clientCapabilities": fc.oneof(junk, fc.constant({ elicitation: { url: {} } })),
                "io.modelcontextprotocol/clientInfo": junk,
              },
              { requiredKeys: [] },
            ),
          },
          { requiredKeys: [] },
        ),
      ),
    },
    { requiredKeys: [] },
  ),
  junk,
);

const mcpBody = fc.oneof(
  message.map((value) => JSON.stringify(value)),
  fc.array(message, { maxLength: 5 }).map((value) => JSON.stringify(value)),
  fc
    .integer({ min: 50, max: 200_000 })
    .map((depth) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":${"[".repeat(depth)}${"]".repeat(depth)}}}`),
  fc.string({ maxLength: 200 }),
  fc.constantFrom("", "{", "[]", "null", '{"jsonrpc":"2.0"}', "\u0000"),
);

const mcpHeaders = fc.record(
  {
    "content-type": fc.constantFrom("application/json", "text/plain", "application/json; charset=latin1", ""),
    accept: fc.constantFrom("application/json, text/event-stream", "application/json", "text/event-stream", "*/*", ""),
    "mcp-protocol-version": fc.oneof(
      fc.constantFrom("2025-11-25", "2025-06-18", "2026-07-28", "junk"),
      edgeString.filter((s) => /^[\x20-\x7e]*$/.test(s)),
    ),
    "mcp-method": fc.oneof(
      fc.constantFrom("tools/call", "tools/list", "server/discover"),
      edgeString.filter((s) => /^[\x20-\x7e]*$/.test(s)),
    ),
    "mcp-name": fc.oneof(
      fc.constantFrom("com-test-notes_create_note"),
      edgeString.filter((s) => /^[\x20-\x7e]*$/.test(s)),
    ),
    "mcp-session-id": fc.oneof(
      fc.uuid(),
      fc.string({ maxLength: 20 }).filter((s) => /^[\x21-\x7e]*$/.test(s)),
    ),
  },
  { requiredKeys: [] },
);

async function send(url: string, init: RequestInit): Promise<Response> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(DEADLINE_MS) });
  await response.arrayBuffer();
  return response;
}

describe("hostile input on the entry points beside /trpc", () => {
  it(`/mcp: ${RUNS} random bodies and headers answer without a 5xx or a hang`, async () => {
    const heapBefore = process.memoryUsage().heapUsed;
    await fc.assert(
      fc.asyncProperty(mcpBody, mcpHeaders, fc.boolean(), fc.constantFrom("POST", "GET", "DELETE", "PUT"), async (body, extra, authenticated, verb) => {
        const response = await send(`${stack.url}/mcp`, {
          method: verb,
          headers: { ...(authenticated ? headers : {}), ...extra },
          ...(verb === "POST" || verb === "PUT" ? { body } : {}),
        });
        expect(response.status, `${verb} ${body.slice(0, 120)}`).toBeLessThan(500);
      }),
      { numRuns: RUNS },
    );
    // The heap may grow with caches and sessions, not with what the junk carried (tens of MB).
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(200 * 1024 * 1024);
  }, 240_000);

  it(`the confirmation page: ${RUNS} random paths, cookies and forms answer without a 5xx or a hang`, async () => {
    const pagePath = fc.oneof(
      fc.constantFrom(
        "/confirm",
        "/confirm/",
        "/confirm/session",
        "/confirm/session?token=",
        "/confirm/../trpc",
        "/confirm/%00",
        "/confirm/x/approve",
        "/confirm/x/deny",
      ),
      fc.tuple(fc.constantFrom("/confirm/", "/confirm/session?token="), edgeString).map(([prefix, rest]) => prefix + encodeURIComponent(rest.toWellFormed())),
      fc.tuple(fc.uuid(), fc.constantFrom("", "/approve", "/deny", "/x")).map(([id, tail]) => `/confirm/${id}${tail}`),
    );
    const cookie = fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 200 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
      fc.constant(`toolpact_confirm=${"a".repeat(5000)}`),
    );
    const form = fc.dictionary(fc.constantFrom("csrf", "decision", "token", "__proto__", "x"), edgeString, { maxKeys: 4 });
    await fc.assert(
      fc.asyncProperty(
        pagePath,
        cookie,
        form,
        fc.constantFrom("GET", "POST"),
        fc.constantFrom(undefined, "cross-site", "same-origin"),
        async (where, jar, fields, verb, site) => {
          const response = await send(`${stack.url}${where}`, {
            method: verb,
            redirect: "manual",
            headers: {
              ...(jar === undefined ? {} : { cookie: jar }),
              ...(site === undefined ? {} : { "sec-fetch-site": site }),
              ...(verb === "POST" ? { "content-type": "application/x-www-form-urlencoded" } : {}),
            },
            ...(verb === "POST" ? { body: new URLSearchParams(fields as Record<string, string>).toString() } : {}),
          });
          expect(response.status, `${verb} ${where}`).toBeLessThan(500);
        },
      ),
      { numRuns: RUNS },
    );
  }, 240_000);

  it("a good MCP call and /healthz still answer after the junk", async () => {
    const response = await fetch(`${stack.url}/mcp`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "fuzz", version: "1" } },
      }),
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);
  });
});
