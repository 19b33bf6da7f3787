/**
 * 1,000 malformed requests against tools.preview and tools.execute over real HTTP: wrong types, deep
 * nesting, huge strings, text that is not JSON, wrong content types, junk batches, unicode edge cases and
 * prototype keys. Every error answer carries a toolpact code, none is a 5xx, and the server still answers
 * a good call afterwards.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { edgeStrings, junkValues } from "./support/fuzz-values.js";
import { ASSISTANT_ID, PROVIDER_ID } from "./support/plugins.js";
import { callerHeadersOf, configureWorld, makeSecrets, startStack, type Stack } from "./support/stack.js";
import { mutate, ok } from "./support/wire.js";

const RUNS = 1_000;

let dir: string;
let stack: Stack;
let headers: Record<string, string>;
const secrets = makeSecrets();

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-fuzz-"));
  stack = await startStack({ dbFile: path.join(dir, "toolpact.db"), secrets });
  const keys = await configureWorld(stack);
  headers = await callerHeadersOf(keys, secrets.actorSecret)(ASSISTANT_ID);
});

afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Strings a parser or a store may trip on: NUL, lone surrogates, bidi overrides, BOM, huge ones. */
const edgeString = fc.oneof(
  edgeStrings({ maxLength: 40, extra: ["\uDC00x", "\u2028\u2029", "a\r\nb", "..\\..", "x".repeat(300), "é".repeat(5000)] }),
  fc.integer({ min: 1_000, max: 2_000_000 }).map((n) => "z".repeat(n)),
);

/** Any JSON-ish value, with prototype keys and edge strings mixed in. */
const junkValue = junkValues(edgeString, { keys: ["__proto__", "constructor", "prototype", "toString", ""], width: 5 });

/** A request body as text: structured junk, deep nesting, or text that is not JSON at all. */
const body: fc.Arbitrary<string> = fc.oneof(
  // A call-shaped body whose fields have the wrong types or junk values.
  fc
    .record(
      {
        ref: fc.oneof(
          junkValue,
          fc.record({ providerId: fc.oneof(edgeString, junkValue), tool: fc.oneof(edgeString, junkValue), version: junkValue }, { requiredKeys: [] }),
        ),
        input: junkValue,
        runId: fc.oneof(edgeString, junkValue),
        confirmationToken: fc.oneof(edgeString, junkValue, fc.constant("a.b.c"), fc.constant("eyJhbGciOiJub25lIn0.e30.")),
        idempotencyKey: fc.oneof(edgeString, junkValue),
        actor: junkValue,
        tenantId: junkValue,
      },
      { requiredKeys: [] },
    )
    .map((value) => JSON.stringify(value)),
  // A well-formed ref with a hostile input: deep, prototype-keyed, unicode.
  junkValue.map((input) => JSON.stringify({ ref: { providerId: PROVIDER_ID, tool: "echo" }, input })),
  fc.constantFrom('{"__proto__":{"admin":true},"ref":{"providerId":"com.test.notes","tool":"echo"},"input":{}}', '{"constructor":{"prototype":{"x":1}}}'),
  // Deep nesting, in arrays and objects, past every limit.
  fc.integer({ min: 50, max: 20_000 }).map((depth) => "[".repeat(depth) + "]".repeat(depth)),
  fc
    .integer({ min: 50, max: 5_000 })
    .map(
      (depth) =>
        JSON.stringify({ ref: { providerId: PROVIDER_ID, tool: "echo" } }).slice(0, -1) + ',"input":' + '{"a":'.repeat(depth) + "1" + "}".repeat(depth + 1),
    ),
  // Not JSON.
  fc.string({ maxLength: 200 }),
  fc.constantFrom("", "{", "[1,]", "nul", "\uFEFF{}", '{"a":1}{"b":2}', "{'a':1}", "\u0000"),
  junkValue.map((value) => JSON.stringify(value) ?? "undefined"),
);

const contentType = fc.constantFrom(
  "application/json",
  "application/json",
  "application/json; charset=utf-8",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/json; charset=utf-16",
  "",
);

/** Where it goes: preview or execute, sometimes as a junk batch or with a junk query. */
const target = fc.oneof(
  fc.constantFrom("tools.preview", "tools.execute"),
  fc.constantFrom("tools.preview,tools.execute?batch=1", "tools.execute?batch=true", "tools.preview?input=%7B%7D", "tools.execute?input=%ZZ"),
);

const request = fc.record({ target, body, contentType, authenticated: fc.boolean() });

describe("an HTTP fuzz of tools.preview and tools.execute", () => {
  it(`answers ${RUNS} malformed requests each with a toolpact code and no 5xx, and keeps serving`, async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async ({ target: where, body: text, contentType: type, authenticated }) => {
        const response = await fetch(`${stack.url}/trpc/${where}`, {
          method: "POST",
          headers: { ...(type === "" ? {} : { "content-type": type }), ...(authenticated ? headers : {}) },
          body: text,
        });
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        const raw = await response.text();
        expect(response.status, raw.slice(0, 300)).toBeLessThan(500);
        const answer = JSON.parse(raw) as { result?: unknown; error?: { data?: { toolpactCode?: unknown } } };
        if (response.status !== 200) expect(typeof answer.error?.data?.toolpactCode, raw.slice(0, 300)).toBe("string");
      }),
      { numRuns: RUNS },
    );
    console.log(`http fuzz: ${RUNS} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
    expect([...statuses.keys()].every((status) => status < 500)).toBe(true);

    // Still serving: a good call works, and nothing unexpected reached the server log.
    const good = ok<{ result: unknown }>(
      await mutate(stack.url, "tools.execute", { ref: { providerId: PROVIDER_ID, tool: "echo" }, input: { still: "here" } }, headers),
    );
    expect(good.result).toMatchObject({ input: { still: "here" } });
    expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);
    expect(stack.logs.filter((line) => line.includes('"level":"error"'))).toEqual([]);
  }, 300_000);
});
