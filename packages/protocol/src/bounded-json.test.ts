import { describe, expect, it } from "vitest";
import { isNestedDeeperThan, JsonDepthScanner, readBoundedJson, type BodyRefusal } from "./bounded-json.js";

const bytes = (text: string) => new TextEncoder().encode(text);

async function* chunksOf(text: string, size: number): AsyncGenerator<Uint8Array> {
  const all = bytes(text);
  for (let at = 0; at < all.length; at += size) yield all.subarray(at, at + size);
}

describe("JsonDepthScanner", () => {
  it("stops at the bracket that passes the limit, having looked at exactly that prefix of a 400k-deep body", () => {
    const deep = "[".repeat(400_000) + "]".repeat(400_000);
    const scanner = new JsonDepthScanner(128);
    expect(scanner.push(bytes(deep))).toBe(128);
    expect(scanner.scanned).toBe(129);
  });

  it("does the same work per byte for a deep body as for a flat one: one look per byte, whatever the nesting", () => {
    const limit = 1_000_000;
    const deep = bytes("[".repeat(200_000) + "]".repeat(200_000));
    const flat = bytes(`[${"0,".repeat(199_999)}0]`.padEnd(deep.length, " "));
    const a = new JsonDepthScanner(limit);
    const b = new JsonDepthScanner(limit);
    expect(a.push(deep)).toBe(-1);
    expect(b.push(flat)).toBe(-1);
    expect(a.scanned).toBe(deep.length);
    expect(b.scanned).toBe(flat.length);
  });

  it("accepts nesting at the limit and refuses one level more", () => {
    expect(new JsonDepthScanner(3).push(bytes('{"a":[{"b":1}]}'))).toBe(-1);
    expect(new JsonDepthScanner(3).push(bytes('{"a":[{"b":[1]}]}'))).toBe(11);
  });

  it("ignores brackets inside strings, escaped quotes included, even when a chunk ends mid-escape", () => {
    const text = '{"a":"[[[[\\"{{{{","b":"\\\\"}';
    expect(JSON.parse(text)).toEqual({ a: '[[[["{{{{', b: "\\" });
    const scanner = new JsonDepthScanner(1);
    for (const byte of bytes(text)) expect(scanner.push(Uint8Array.of(byte))).toBe(-1);
    // After the string ends, a bracket counts again.
    expect(new JsonDepthScanner(1).push(bytes('{"a":"\\\\",[1]}'))).toBe(10);
  });

  it("checks a query's input text the same way", () => {
    expect(isNestedDeeperThan(`${"[".repeat(9)}${"]".repeat(9)}`, 8)).toBe(true);
    expect(isNestedDeeperThan(`${"[".repeat(8)}${"]".repeat(8)}`, 8)).toBe(false);
  });
});

describe("readBoundedJson", () => {
  it("gives the text of a body within both limits, across chunks and multi-byte characters", async () => {
    const text = JSON.stringify({ note: "grüße 🌍", list: [[1], [2]] });
    const read = await readBoundedJson(chunksOf(text, 3), { maxBytes: 1000, maxDepth: 3 });
    expect(read).toEqual({ ok: true, text });
  });

  it("refuses a deep body at the limit naming it, reads and drops the rest, and answers before the drain ends", async () => {
    const seen: BodyRefusal[] = [];
    let chunksAfterRefusal = 0;
    const body = (async function* () {
      yield* chunksOf("[".repeat(300), 100);
      chunksAfterRefusal = -1;
      for (let i = 0; i < 5; i++) {
        chunksAfterRefusal += 1;
        yield bytes("]".repeat(60));
      }
    })();
    const read = await readBoundedJson(body, { maxBytes: 10_000, maxDepth: 128, onRefused: (refusal) => seen.push(refusal) });
    expect(read).toMatchObject({ ok: false, drained: true, refusal: { reason: "too-deep" } });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.message).toMatchInlineSnapshot(`"request body is nested more than 128 levels deep (the server's limit): flatten the input"`);
    expect(chunksAfterRefusal).toBe(4);
  });

  it("refuses a body past maxBytes while it streams, and one whose declared length is past it before reading any", async () => {
    const streamed = await readBoundedJson(chunksOf(JSON.stringify("x".repeat(5000)), 1000), { maxBytes: 2048, maxDepth: 8 });
    expect(streamed).toMatchObject({ ok: false, drained: true, refusal: { reason: "too-large" } });
    const seen: BodyRefusal[] = [];
    let refusedBeforeFirstChunk: boolean | undefined;
    const declared = readBoundedJson(
      (async function* () {
        refusedBeforeFirstChunk = seen.length === 1;
        yield bytes("{}");
      })(),
      { maxBytes: 2048, maxDepth: 8, declaredBytes: 4096, onRefused: (refusal) => seen.push(refusal) },
    );
    expect(seen.map((refusal) => refusal.message)).toEqual(["request body is larger than the server's limit of 2048 bytes: send a smaller input"]);
    expect(refusedBeforeFirstChunk).toBe(true);
    expect(await declared).toMatchObject({ ok: false, drained: true });
  });

  it("stops draining past drainMaxBytes: the caller then cuts the connection", async () => {
    const read = await readBoundedJson(chunksOf("x".repeat(10_000), 500), { maxBytes: 1000, maxDepth: 8, drainMaxBytes: 2000 });
    expect(read).toMatchObject({ ok: false, drained: false, refusal: { reason: "too-large" } });
  });
});
