/**
 * One home for what a failed HTTP exchange means (packages/protocol/src/http-status.ts): the client's
 * transport and the MCP bridge import it, and neither writes its own map from HTTP statuses or network
 * error codes to toolpact errors. Fails when a second one appears in their sources.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const EDGES = ["packages/client/src", "packages/mcp/src"];

/** What a status-to-error map looks like: a 4xx or 5xx compared, switched on or used as a key; or a network error code listed. */
const MAP_SHAPES: readonly [string, RegExp][] = [
  ["an HTTP status compared", /\b(status|statusCode|httpStatus)\b\s*(===|!==|==|!=|>=|<=|>|<)\s*[45]\d\d\b/],
  ["an HTTP status in a switch", /\bcase\s+[45]\d\d\s*:/],
  ["an HTTP status as a key", /^\s*\[?\s*[45]\d\d\s*\]?\s*:/m],
  ["an HTTP status in a list", /\[\s*[45]\d\d\s*,\s*[45]\d\d/],
  ["a network error code", /["'`](ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|UND_ERR_CONNECT_TIMEOUT)["'`]/],
];

/** The shapes of a status map found in one source text. */
function statusMapsIn(source: string): string[] {
  return MAP_SHAPES.filter(([, pattern]) => pattern.test(source)).map(([what]) => what);
}

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts"))
    .map((file) => path.join(dir, file));
}

describe("what a failed HTTP exchange means lives in @toolpact/protocol only", () => {
  it("the check finds a status map where there is one", () => {
    expect(statusMapsIn("if (response.status === 404) throw notSent();")).toEqual(["an HTTP status compared"]);
    expect(statusMapsIn("const MAP = {\n  502: 'OUTCOME_UNKNOWN',\n};")).toEqual(["an HTTP status as a key"]);
    expect(statusMapsIn("switch (status) { case 503: return x; }")).toEqual(["an HTTP status in a switch"]);
    expect(statusMapsIn("const codes = new Set(['ECONNREFUSED']);")).toEqual(["a network error code"]);
    expect(statusMapsIn('refuse(res, 404, "Session not found");')).toEqual([]);
  });

  it("no source of the client or the MCP bridge writes its own", () => {
    const found = EDGES.flatMap(sources).flatMap((file) => statusMapsIn(readFileSync(path.join(ROOT, file), "utf8")).map((what) => `${file}: ${what}`));
    expect(found, "decide it in packages/protocol/src/http-status.ts and import it").toEqual([]);
  });

  it("both decide through it", () => {
    const uses = (file: string, names: string[]) => {
      const source = readFileSync(path.join(ROOT, file), "utf8");
      for (const name of names)
        expect(source, `${file} uses ${name}`).toMatch(
          new RegExp(`\\b${name}\\b[^;]*from "@toolpact/protocol"|from "@toolpact/protocol"[^;]*\\b${name}\\b`, "s"),
        );
    };
    uses("packages/client/src/http-transport.ts", ["exchangeFailure", "withToolpactAnswers"]);
    uses("packages/client/src/http-fetch.ts", ["withSendFailures"]);
    uses("packages/mcp/src/remote-backend.ts", ["exchangeFailure", "withToolpactAnswers", "withSendFailures"]);
  });
});
