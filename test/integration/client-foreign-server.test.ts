/**
 * `@toolpact/client` pointed at something that is not a toolpact server (a wrong URL, a web app, a proxy
 * in between): it says so, and it is REQUEST_NOT_SENT where the answer proves nothing ran at toolpact,
 * OUTCOME_UNKNOWN (said for what it is) where the request may have reached toolpact behind a proxy.
 * Against real HTTP servers on 127.0.0.1.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpTransport, isToolpactError, type ToolpactError } from "@toolpact/client";

/** What the foreign server answers on a path: status, content type, body. */
const ANSWERS: Record<string, readonly [number, string, string]> = {
  "/html404": [404, "text/html", "<!doctype html><title>Not Found</title><h1>Not Found</h1>"],
  "/text200": [200, "text/plain", "hello from some other app"],
  "/json200": [200, "application/json", '{"status":"ok","version":"1.2.3"}'],
  "/trpc404": [404, "application/json", '{"error":{"message":"No procedure found","code":-32004,"data":{"code":"NOT_FOUND","httpStatus":404}}}'],
  "/limited429": [429, "text/plain", "rate limited by the gateway"],
  "/gateway502": [502, "text/html", "<html><body>502 Bad Gateway</body></html>"],
  "/forbidden403": [403, "text/html", "<html><body>Forbidden</body></html>"],
};

let server: Server;
let origin = "";
const received: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received.push(`${req.method} ${req.url}`);
      const base = Object.keys(ANSWERS).find((prefix) => req.url?.startsWith(`${prefix}/`));
      const [status, type, body] = ANSWERS[base ?? "/html404"]!;
      res.writeHead(status, { "content-type": type }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const createNote = { providerId: "com.test.notes", tool: "create-note" };

async function failure(promise: Promise<unknown>): Promise<ToolpactError> {
  const error = await promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (e: unknown) => e,
  );
  if (!isToolpactError(error)) throw new Error(`expected a ToolpactError, got ${String(error)}`);
  return error;
}

const transportAt = (base: string) => createHttpTransport({ url: `${origin}${base}`, pluginKey: "k", actorToken: "t" });

describe("a client pointed at something that is not a toolpact server", () => {
  it("a 404 page: REQUEST_NOT_SENT, saying what answered and to check the URL, for a preview, an execute and a wait", async () => {
    const transport = transportAt("/html404");
    const execute = await failure(transport.execute(createNote, { title: "x" }));
    expect(execute.code).toBe("REQUEST_NOT_SENT");
    expect(execute.message).toBe(
      `the server at ${origin}/html404/trpc/tools.execute answered HTTP 404 without toolpact's JSON: it is not a toolpact server ` +
        "or toolpact is not at that path (a wrong URL?), or something in front of toolpact refused the request; either way nothing " +
        "ran at toolpact: check that the transport's `url` is the toolpact server's base URL (the one toolpact serve or toolpact dev " +
        "prints), then call again",
    );
    expect(execute.whatToDo).toMatch(/^nothing ran: fix the cause \(server down, wrong url, bad option\)/);
    expect((await failure(transport.preview(createNote, { title: "x" }))).code).toBe("REQUEST_NOT_SENT");
    const wait = await failure(transport.waitForConfirmation("req-1"));
    expect(wait.code).toBe("REQUEST_NOT_SENT");
    // A wait is a query: its input travels in the URL, which the message leaves out.
    expect(wait.message).toMatch(new RegExp(`^the server at ${origin}/html404/trpc/confirmations\\.wait answered HTTP 404 `));
  });

  it("a 200 that is not JSON, JSON of another shape, another tRPC server's 404, a gateway's 429: REQUEST_NOT_SENT", async () => {
    for (const base of ["/text200", "/json200", "/trpc404", "/limited429"]) {
      const error = await failure(transportAt(base).execute(createNote, { title: "x" }));
      expect(error.code, base).toBe("REQUEST_NOT_SENT");
      expect(error.message).toContain(`answered HTTP ${base.slice(-3)} without toolpact's JSON: it is not a toolpact server or`);
    }
  });

  it("a gateway's 502, or a 403 page (a proxy may hide toolpact's own answer): an execute's outcome is unknown, said for what it is", async () => {
    for (const [base, status] of [
      ["/gateway502", 502],
      ["/forbidden403", 403],
    ] as const) {
      const transport = transportAt(base);
      const execute = await failure(transport.execute(createNote, { title: "x" }));
      expect(execute.code).toBe("OUTCOME_UNKNOWN");
      expect(execute.message).toBe(
        `the call failed before toolpact answered (the server at ${origin}${base}/trpc/tools.execute answered HTTP ${status} without ` +
          "toolpact's JSON: a proxy or gateway in between, or not a toolpact server (a wrong URL?)); whether it took effect is unknown: " +
          "look the operation up, or retry with the same idempotencyKey",
      );
      const preview = await failure(transport.preview(createNote, { title: "x" }));
      expect(preview.code).toBe("OUTCOME_UNKNOWN");
      expect(preview.message).toBe(
        `no toolpact answer came back (the server at ${origin}${base}/trpc/tools.preview answered HTTP ${status} without toolpact's JSON: ` +
          "a proxy or gateway in between, or not a toolpact server (a wrong URL?)): preview again (a preview runs no tool)",
      );
    }
  });

  it("the requests did reach the foreign server (nothing was refused before sending)", () => {
    expect(received).toContain("POST /html404/trpc/tools.execute");
    expect(received.some((line) => line.startsWith("GET /html404/trpc/confirmations.wait?"))).toBe(true);
  });
});
