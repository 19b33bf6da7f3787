/**
 * How `@toolpact/client` fails, from the caller's side: options checked when the transport is made, a
 * request that never left (REQUEST_NOT_SENT) told apart from one whose answer was lost (OUTCOME_UNKNOWN),
 * and a ToolpactError nobody catches printed by Node in a few lines.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpTransport, isToolpactError, type HttpTransportOptions, type ToolpactError } from "@toolpact/client";
import { ASSISTANT_ID, PROVIDER_ID } from "./support/plugins.js";
import { TEST_POLICY, configureWorld, makeSecrets, startStack, type Stack, type WorldKeys } from "./support/stack.js";
import { mintActorToken } from "./support/tokens.js";

let dir: string;
let stack: Stack;
let keys: WorldKeys;
let actorToken: string;
const secrets = makeSecrets();

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-client-failures-"));
  stack = await startStack({ dbFile: path.join(dir, "toolpact.db"), secrets });
  keys = await configureWorld(stack);
  await stack.admin("setPolicy", { tenantId: "t1", policy: TEST_POLICY });
  actorToken = await mintActorToken(secrets.actorSecret, { sub: "u-client-failures", expiresIn: 3600 });
});

afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const listNotes = { providerId: PROVIDER_ID, tool: "list-notes" };
const createNote = { providerId: PROVIDER_ID, tool: "create-note" };

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

function creationError(options: unknown): ToolpactError {
  try {
    createHttpTransport(options as HttpTransportOptions);
  } catch (error) {
    if (isToolpactError(error)) return error;
    throw error;
  }
  throw new Error("expected createHttpTransport to throw");
}

/** A port nothing listens on: listened on once, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("createHttpTransport checks its options at once", () => {
  it("a key read from an unset environment variable fails at creation, naming the option and what to do", () => {
    const error = creationError({ url: "http://127.0.0.1:4400", pluginKey: process.env.TOOLPACT_TEST_UNSET_PLUGIN_KEY, actorToken: "t" });
    expect(error.code).toBe("REQUEST_NOT_SENT");
    expect(error.message).toMatchInlineSnapshot(
      `"createHttpTransport: option "pluginKey" is undefined: pass the caller plugin's key (\`toolpact dev\` prints one; admin.issuePluginKey issues one); if it comes from process.env, that variable is not set in this process; nothing was sent"`,
    );
    expect(creationError({ url: "http://127.0.0.1:4400", pluginKey: "k", actorToken: undefined }).message).toMatch(
      /^createHttpTransport: option "actorToken" is undefined: pass the user's actor token .*process\.env/,
    );
    expect(creationError({ url: "http://127.0.0.1:4400", pluginKey: "key with\nnewline", actorToken: "t" }).message).toMatch(
      /option "pluginKey" is a string with spaces or control characters/,
    );
    expect(creationError(undefined).message).toMatch(/^createHttpTransport takes an options object \{ url, pluginKey, actorToken \}; got undefined/);
  });

  it.each([
    [undefined, /option "url" is undefined: pass the toolpact server's base URL/],
    ["localhost:4400", /option "url" is the string "localhost:4400", which is not http: or https:/],
    ["/trpc", /option "url" is the string "\/trpc", which is not an absolute URL/],
    ["http://127.0.0.1:4400/?tenant=t1", /which has a query or fragment/],
  ])("refuses the url %j", (url, message) => {
    const error = creationError({ url, pluginKey: "k", actorToken: "t" });
    expect(error.code).toBe("REQUEST_NOT_SENT");
    expect(error.message).toMatch(message);
  });

  it("never repeats credentials carried in the url", () => {
    const error = creationError({ url: "http://svc:hunter2@127.0.0.1:4400", pluginKey: "k", actorToken: "t" });
    expect(error.message).not.toContain("hunter2");
    expect(error.message).toMatch(/carries a user name or password: pass the key as "pluginKey"/);
  });

  it("an actorToken function that gives no token fails the call as REQUEST_NOT_SENT, before anything is sent", async () => {
    const transport = createHttpTransport({ url: stack.url, pluginKey: keys.t1[ASSISTANT_ID]!.key, actorToken: () => process.env.TOOLPACT_TEST_UNSET_ACTOR! });
    const error = await failure(transport.execute(listNotes, {}));
    expect(error.code).toBe("REQUEST_NOT_SENT");
    expect(error.message).toMatch(/^the actorToken function of createHttpTransport returned undefined/);
  });
});

describe("a request that never left is REQUEST_NOT_SENT; one whose answer was lost is OUTCOME_UNKNOWN", () => {
  it("a preview or an execute to a port nobody listens on, or to an unknown host", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const transport = createHttpTransport({ url, pluginKey: "k", actorToken: "t" });
    for (const call of [transport.preview(createNote, { title: "x" }), transport.execute(createNote, { title: "x" })]) {
      const error = await failure(call);
      expect(error.code).toBe("REQUEST_NOT_SENT");
      expect(error.message).toContain(`could not reach the toolpact server at ${url} (connect ECONNREFUSED`);
      expect(error.message).toContain("the request was never sent, so nothing ran");
      expect((error.cause as { code?: string }).code).toBe("ECONNREFUSED");
    }
    const unknownHost = createHttpTransport({ url: "http://toolpact-server.invalid:4400", pluginKey: "k", actorToken: "t" });
    expect((await failure(unknownHost.execute(listNotes, {}))).code).toBe("REQUEST_NOT_SENT");
  });

  it("a preview to a server that was stopped", async () => {
    const own = await startStack({ dbFile: path.join(dir, "stopped.db"), secrets });
    const ownKeys = await configureWorld(own);
    const transport = createHttpTransport({ url: own.url, pluginKey: ownKeys.t1[ASSISTANT_ID]!.key, actorToken });
    await transport.execute(listNotes, {});
    await own.close();
    const error = await failure(transport.preview(createNote, { title: "after the stop" }));
    expect(error.code).toBe("REQUEST_NOT_SENT");
  });

  it("a connection cut after the request went out: an execute is OUTCOME_UNKNOWN, a preview says to preview again", async () => {
    let received = 0;
    const cutter: Server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        received++;
        res.socket?.destroy();
      });
    });
    await new Promise<void>((resolve) => cutter.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = cutter.address() as { port: number };
      const transport = createHttpTransport({ url: `http://127.0.0.1:${port}`, pluginKey: "k", actorToken: "t" });
      const lost = await failure(transport.execute(createNote, { title: "x" }));
      expect(lost.code).toBe("OUTCOME_UNKNOWN");
      expect(lost.message).toMatch(/whether it took effect is unknown: look the operation up, or retry with the same idempotencyKey/);
      const preview = await failure(transport.preview(createNote, { title: "x" }));
      expect(preview.code).toBe("OUTCOME_UNKNOWN");
      expect(preview.message).toMatch(/^no toolpact answer came back \(.+\): preview again \(a preview runs no tool\)$/);
      expect(received).toBe(2);
    } finally {
      await new Promise<void>((resolve) => cutter.close(() => resolve()));
    }
  });
});

/** Runs support/uncaught-call.mjs (one execute, never caught) and answers its exit code and stderr. */
async function uncaughtCall(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const script = fileURLToPath(new URL("./support/uncaught-call.mjs", import.meta.url));
  const child = spawn(process.execPath, [script], { env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, stderr };
}

describe("a ToolpactError nobody catches", () => {
  it("keeps the wire's details behind cause", async () => {
    const transport = createHttpTransport({ url: stack.url, pluginKey: "tp_not_a_key", actorToken });
    const error = await failure(transport.execute(listNotes, {}));
    expect(error.code).toBe("UNAUTHENTICATED");
    expect(error.cause).toMatchObject({
      name: "TRPCClientError",
      data: { httpStatus: 401, path: "tools.execute", toolpactCode: "UNAUTHENTICATED" },
      meta: { response: { status: 401 } },
      shape: { data: { code: "UNAUTHORIZED" } },
    });
  });

  it("prints in a few lines: code, message, what to do; the tRPC error stays behind cause", async () => {
    const { code, stderr } = await uncaughtCall({ TOOLPACT_URL: stack.url, TOOLPACT_PLUGIN_KEY: "tp_not_a_key", TOOLPACT_ACTOR_TOKEN: actorToken });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^ToolpactError \[UNAUTHENTICATED\]: .+$/m);
    expect(stderr).toMatch(/^ {4}what to do: check the plugin key and the actor token/m);
    expect(stderr).toMatch(/^ {2}\[cause\]: TRPCClientError: /m);
    expect(stderr).toMatch(/^ {6}toolpactCode: 'UNAUTHENTICATED',$/m);
    // The answer tRPC keeps twice more (shape, and meta with the response) is not printed.
    expect(stderr).not.toMatch(/shape|meta|responseJSON/);
    expect(stderr.split("\n").length).toBeLessThanOrEqual(30);
  });

  it("a request that never left says so", async () => {
    const { code, stderr } = await uncaughtCall({
      TOOLPACT_URL: `http://127.0.0.1:${await closedPort()}`,
      TOOLPACT_PLUGIN_KEY: "k",
      TOOLPACT_ACTOR_TOKEN: "t",
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^ToolpactError \[REQUEST_NOT_SENT\]: could not reach the toolpact server at .+ the request was never sent, so nothing ran/m);
    expect(stderr).toMatch(/^ {4}what to do: nothing ran: fix the cause/m);
    expect(stderr.split("\n").length).toBeLessThanOrEqual(30);
  });
});
