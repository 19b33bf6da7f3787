import { TRPCClientError } from "@trpc/client";
import {
  ToolpactError,
  isToolpactError,
  type ConfirmationInfo,
  type ConfirmationStatus,
  type ExecuteOptions,
  type ExecuteResult,
  type PreviewOptions,
  type PreviewResult,
  type ToolRef,
} from "@toolpact/protocol";
import { describe, expect, it } from "vitest";
import { confirmPreview } from "./confirm.js";
import { toToolpactError } from "./error-wire.js";
import { defineProvider } from "./provider.js";
import { createConfirmedToolMethod, createToolMethod, type ToolDescriptor } from "./tool-client.js";
import type { ToolTransport } from "./transport.js";

const createRecord = {
  providerId: "com.example.notes",
  name: "create-record",
  version: 2,
  fullName: "com.example.notes:create-record@2",
  effect: "write",
  requiresConfirmation: true,
} as const satisfies ToolDescriptor;

const searchRecords = {
  providerId: "com.example.notes",
  name: "search-records",
  version: 1,
  fullName: "com.example.notes:search-records@1",
  effect: "read",
  requiresConfirmation: false,
} as const satisfies ToolDescriptor;

type Mode = "none" | "token" | "platform";

/**
 * A small provider behind the ToolTransport interface: token and platform confirmation, single-use
 * tokens bound to tool and input, and a decision the test makes while `confirm` waits.
 */
class TestTransport implements ToolTransport {
  readonly calls: { method: string; ref?: ToolRef; input?: unknown; options?: unknown }[] = [];
  readonly decisions = new Map<string, ConfirmationStatus>();
  private readonly tokens = new Map<string, string>();
  private next = 0;
  /** How many `pending` rounds a request answers before its decision shows. */
  pendingRounds = 0;
  expiresAt = new Date(Date.now() + 300_000).toISOString();

  constructor(private readonly mode: Mode) {}

  async preview(ref: ToolRef, input: unknown, options?: PreviewOptions): Promise<PreviewResult> {
    this.calls.push({ method: "preview", ref, input, options });
    const binding = `${ref.providerId}:${ref.tool}@${ref.version}|${JSON.stringify(input)}`;
    let confirmation: ConfirmationInfo;
    if (this.mode === "none") {
      confirmation = { required: false };
    } else if (this.mode === "token") {
      const token = `tok-${++this.next}`;
      this.tokens.set(token, binding);
      confirmation = { required: true, mode: "token", token, expiresAt: this.expiresAt };
    } else {
      const requestId = `req-${++this.next}`;
      const token = `tok-${this.next}`;
      this.tokens.set(token, binding);
      this.decisions.set(requestId, { status: "approved", token, expiresAt: this.expiresAt });
      confirmation = { required: true, mode: "platform", requestId, confirmUrl: `https://platform.test/confirm/${requestId}`, expiresAt: this.expiresAt };
    }
    return { summary: `would run ${ref.tool}`, details: input, confirmation };
  }

  async execute(ref: ToolRef, input: unknown, options?: ExecuteOptions): Promise<ExecuteResult> {
    this.calls.push({ method: "execute", ref, input, options });
    const binding = `${ref.providerId}:${ref.tool}@${ref.version}|${JSON.stringify(input)}`;
    if (this.mode !== "none") {
      const token = options?.confirmationToken;
      if (token === undefined) throw new ToolpactError("CONFIRMATION_REQUIRED", "preview first");
      if (this.tokens.get(token) !== binding) throw new ToolpactError("CONFIRMATION_MISMATCH", "token for another call");
      this.tokens.delete(token);
    }
    return { operationId: `op-${++this.next}`, result: { echoed: input } };
  }

  async waitForConfirmation(requestId: string, options?: { readonly signal?: AbortSignal }): Promise<ConfirmationStatus> {
    this.calls.push({ method: "wait", options });
    options?.signal?.throwIfAborted();
    if (this.pendingRounds > 0) {
      this.pendingRounds--;
      await new Promise((resolve) => setTimeout(resolve, 1));
      options?.signal?.throwIfAborted(); // like a long poll cut short
      return { status: "pending", expiresAt: this.expiresAt };
    }
    const decision = this.decisions.get(requestId);
    if (!decision) throw new ToolpactError("CONFIRMATION_INVALID", `no request ${requestId}`);
    return decision;
  }
}

describe("tool methods over a transport", () => {
  it("token mode: confirm returns the preview's token at once and execute carries it", async () => {
    const transport = new TestTransport("token");
    const tool = createConfirmedToolMethod<typeof createRecord.fullName, { title: string }, unknown>(transport, createRecord);
    const preview = await tool.preview({ title: "Q3 plan" }, { runId: "run-1" });
    expect(preview.confirmation).toMatchObject({ required: true, mode: "token" });
    const token = await tool.confirm(preview);
    expect(token).toBe((preview.confirmation as { token: string }).token);
    const outcome = await tool.execute({ title: "Q3 plan" }, { confirmationToken: token, idempotencyKey: "k1" });
    expect(outcome.result).toEqual({ echoed: { title: "Q3 plan" } });
    expect(transport.calls.map((c) => c.method)).toEqual(["preview", "execute"]);
    expect(transport.calls[0]).toMatchObject({
      ref: { providerId: "com.example.notes", tool: "create-record", version: 2 },
      options: { runId: "run-1" },
    });
    expect(transport.calls[1]!.options).toEqual({ confirmationToken: token, idempotencyKey: "k1" });
    // Single use is the runtime's rule; the client passes the same token again and the error comes through typed.
    await expect(tool.execute({ title: "Q3 plan" }, { confirmationToken: token })).rejects.toMatchObject({ code: "CONFIRMATION_MISMATCH" });
  });

  it("platform mode: onConfirmationRequired gets the page once, before the first wait; token mode never calls it", async () => {
    const transport = new TestTransport("platform");
    transport.pendingRounds = 2;
    const tool = createConfirmedToolMethod<typeof createRecord.fullName, { title: string }, unknown>(transport, createRecord);
    const preview = await tool.preview({ title: "x" });
    const seen: unknown[] = [];
    await tool.confirm(preview, {
      onConfirmationRequired: (request) => {
        seen.push(request);
        expect(transport.calls.filter((c) => c.method === "wait")).toHaveLength(0);
      },
    });
    const { requestId, confirmUrl, expiresAt } = preview.confirmation as { requestId: string; confirmUrl: string; expiresAt: string };
    expect(seen).toEqual([{ confirmUrl, expiresAt, requestId, tool: createRecord.fullName }]);
    expect(Object.isFrozen(seen[0])).toBe(true);

    const tokenTool = createConfirmedToolMethod<typeof createRecord.fullName, { title: string }, unknown>(new TestTransport("token"), createRecord);
    let called = false;
    await tokenTool.confirm(await tokenTool.preview({ title: "x" }), { onConfirmationRequired: () => void (called = true) });
    expect(called).toBe(false);
  });

  it("platform mode: an already aborted signal stops confirm before onConfirmationRequired", async () => {
    const transport = new TestTransport("platform");
    const tool = createConfirmedToolMethod<typeof createRecord.fullName, { title: string }, unknown>(transport, createRecord);
    const preview = await tool.preview({ title: "x" });
    const reason = new Error("gone");
    let called = false;
    await expect(tool.confirm(preview, { signal: AbortSignal.abort(reason), onConfirmationRequired: () => void (called = true) })).rejects.toBe(reason);
    expect(called).toBe(false);
  });

  it("platform mode: confirm waits through pending rounds until the user approves", async () => {
    const transport = new TestTransport("platform");
    transport.pendingRounds = 3;
    const tool = createConfirmedToolMethod<typeof createRecord.fullName, { title: string }, unknown>(transport, createRecord);
    const preview = await tool.preview({ title: "x" });
    const token = await tool.confirm(preview);
    expect(token).toMatch(/^tok-/);
    expect(transport.calls.filter((c) => c.method === "wait")).toHaveLength(4);
    await expect(tool.execute({ title: "x" }, { confirmationToken: token })).resolves.toMatchObject({ operationId: expect.any(String) });
  });

  it.each([
    [{ status: "denied" } as const, "CONFIRMATION_DENIED", /denied/],
    [{ status: "cancelled" } as const, "CONFIRMATION_DENIED", /cancelled/],
    [{ status: "expired" } as const, "CONFIRMATION_EXPIRED", /expired/],
  ])("platform mode: %o rejects with %s and never executes", async (decision, code, message) => {
    const transport = new TestTransport("platform");
    const tool = createConfirmedToolMethod<typeof createRecord.fullName, { title: string }, unknown>(transport, createRecord);
    const preview = await tool.preview({ title: "x" });
    const requestId = (preview.confirmation as { requestId: string }).requestId;
    transport.decisions.set(requestId, decision);
    const error = await tool.confirm(preview).catch((e: unknown) => e);
    expect(isToolpactError(error)).toBe(true);
    expect(error).toMatchObject({ code, data: { requestId, tool: createRecord.fullName } });
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain(createRecord.fullName);
    expect(transport.calls.some((c) => c.method === "execute")).toBe(false);
  });

  it("platform mode: a server that answers pending long past expiry cannot hold confirm forever", async () => {
    const transport = new TestTransport("platform");
    transport.expiresAt = new Date(Date.now() - 120_000).toISOString();
    transport.pendingRounds = 1_000;
    const tool = createConfirmedToolMethod<typeof createRecord.fullName, unknown, unknown>(transport, createRecord);
    const preview = await tool.preview({});
    await expect(tool.confirm(preview)).rejects.toMatchObject({ code: "CONFIRMATION_EXPIRED" });
    expect(transport.calls.filter((c) => c.method === "wait")).toHaveLength(1);
  });

  it("platform mode: aborting the wait rejects with the signal's reason, however the transport reports the abort", async () => {
    const transport = new TestTransport("platform");
    const wait = transport.waitForConfirmation.bind(transport);
    transport.waitForConfirmation = async (requestId, options) => {
      try {
        return await wait(requestId, options);
      } catch (error) {
        throw TRPCClientError.from(error as Error);
      }
    };
    transport.pendingRounds = 1_000;
    const tool = createConfirmedToolMethod<typeof createRecord.fullName, unknown, unknown>(transport, createRecord);
    const preview = await tool.preview({});
    const controller = new AbortController();
    const waiting = tool.confirm(preview, { signal: controller.signal });
    const reason = new Error("user left");
    setTimeout(() => controller.abort(reason), 5);
    await expect(waiting).rejects.toBe(reason);
    expect(transport.calls.filter((c) => c.method === "wait").every((c) => (c.options as { signal?: unknown }).signal === controller.signal)).toBe(true);
  });

  it("a tool without required confirmation: confirm resolves undefined and execute runs with or without a token", async () => {
    const transport = new TestTransport("none");
    const tool = createToolMethod<typeof searchRecords.fullName, { query: string }, unknown>(transport, searchRecords);
    const preview = await tool.preview({ query: "q" });
    const token = await tool.confirm(preview);
    expect(token).toBeUndefined();
    await tool.execute({ query: "q" });
    await tool.execute({ query: "q" }, { confirmationToken: token, runId: "r" });
    // An undefined token is dropped, not sent as a member with an undefined value.
    expect(transport.calls.filter((c) => c.method === "execute").map((c) => c.options)).toEqual([undefined, { runId: "r" }]);
  });

  it("a tool without required confirmation returns the token when policy demands one", async () => {
    const transport = new TestTransport("token");
    const tool = createToolMethod<typeof searchRecords.fullName, { query: string }, unknown>(transport, searchRecords);
    const preview = await tool.preview({ query: "q" });
    const token = await tool.confirm(preview);
    expect(token).toMatch(/^tok-/);
    await expect(tool.execute({ query: "q" }, { confirmationToken: token })).resolves.toBeDefined();
  });

  it("a confirmation-requiring tool whose preview says none is needed rejects: the client is stale", async () => {
    const transport = new TestTransport("none");
    const tool = createConfirmedToolMethod<typeof createRecord.fullName, unknown, unknown>(transport, createRecord);
    const preview = await tool.preview({});
    await expect(tool.confirm(preview)).rejects.toMatchObject({ code: "CONFIRMATION_MISMATCH", data: { tool: createRecord.fullName } });
  });

  it("rejects with ToolpactError whatever the transport throws", async () => {
    const failing: ToolTransport = {
      preview: () => Promise.reject(new TypeError("fetch failed")),
      execute: () =>
        Promise.reject(
          TRPCClientError.from({
            error: {
              message: "the tool com.example.notes:create-record@2 is not enabled",
              code: -32003,
              data: { code: "FORBIDDEN", httpStatus: 403, toolpactCode: "PROVIDER_DISABLED", toolpactData: { tool: createRecord.fullName } },
            },
          }),
        ),
      waitForConfirmation: () => Promise.reject(new Error("unused")),
    };
    const tool = createToolMethod<typeof searchRecords.fullName, unknown, unknown>(failing, searchRecords);
    const previewError = await tool.preview({}).catch((e: unknown) => e);
    expect(previewError).toBeInstanceOf(ToolpactError);
    expect(previewError).toMatchObject({ code: "OUTCOME_UNKNOWN", cause: expect.any(TypeError) });
    const executeError = await tool.execute({}).catch((e: unknown) => e);
    expect(executeError).toBeInstanceOf(ToolpactError);
    expect(executeError).toMatchObject({
      code: "PROVIDER_DISABLED",
      message: "the tool com.example.notes:create-record@2 is not enabled",
      data: { tool: createRecord.fullName },
    });
  });
});

describe("confirmPreview", () => {
  it("works on a plain PreviewResult from any transport", async () => {
    const transport = new TestTransport("platform");
    const preview = await transport.preview({ providerId: "p", tool: "t", version: 1 }, {});
    await expect(confirmPreview(transport, preview)).resolves.toMatch(/^tok-/);
    const none: PreviewResult = { summary: "", details: null, confirmation: { required: false } };
    await expect(confirmPreview(transport, none)).resolves.toBeUndefined();
  });
});

describe("toToolpactError", () => {
  const wireError = (data: unknown) => TRPCClientError.from({ error: { message: "from the server", code: -32600, data } });

  it("keeps code, message and the known, well-typed fields of toolpactData", () => {
    const error = toToolpactError(
      wireError({
        code: "BAD_REQUEST",
        toolpactCode: "INPUT_INVALID",
        toolpactData: {
          issues: [{ path: "/title", message: "must be string" }, { path: 3, message: "dropped" }, "junk"],
          operationId: 42,
          requestId: "req-1",
          retryAfterMs: Number.NaN,
          injected: "<script>",
        },
      }),
    );
    expect(error.code).toBe("INPUT_INVALID");
    expect(error.message).toBe("from the server");
    expect(error.data).toEqual({ issues: [{ path: "/title", message: "must be string" }], requestId: "req-1" });
    expect(error.cause).toBeInstanceOf(TRPCClientError);
  });

  it("does not trust an unknown code on the wire", () => {
    const error = toToolpactError(wireError({ toolpactCode: "ROOT_GRANTED" }));
    expect(error.code).toBe("OUTCOME_UNKNOWN");
    expect(error.message).toMatchInlineSnapshot(
      `"the call failed before toolpact answered (from the server); whether it took effect is unknown: look the operation up, or retry with the same idempotencyKey"`,
    );
  });

  it("returns a ToolpactError as it is and honours the fallback code", () => {
    const original = new ToolpactError("RATE_LIMITED", "slow down", { retryAfterMs: 100 });
    expect(toToolpactError(original)).toBe(original);
    expect(toToolpactError("boom", "STORE_UNAVAILABLE")).toMatchObject({
      code: "STORE_UNAVAILABLE",
      message: "the call failed before toolpact answered (boom)",
    });
  });
});

describe("defineProvider", () => {
  const tools = { createRecord, searchRecords };
  const execute = async () => ({});

  it("builds the definition in declared order", () => {
    const handlers = { searchRecords: { execute }, createRecord: { execute, preview: () => ({ summary: "s" }) } };
    const definition = defineProvider("com.example.notes", tools, handlers);
    expect(definition.providerId).toBe("com.example.notes");
    expect(definition.tools.map((t) => [t.name, t.version, t.handler])).toEqual([
      ["create-record", 2, handlers.createRecord],
      ["search-records", 1, handlers.searchRecords],
    ]);
    expect(Object.isFrozen(definition.tools)).toBe(true);
  });

  it("refuses a handler for an undeclared tool", () => {
    expect(() => defineProvider("com.example.notes", tools, { createRecord: { execute }, searchRecords: { execute }, deleteAll: { execute } })).toThrowError(
      expect.objectContaining({ code: "CAPABILITY_UNDECLARED", message: expect.stringContaining('handler "deleteAll"') }),
    );
  });

  it("refuses a declared tool without an execute, including one only inherited from a prototype", () => {
    expect(() => defineProvider("com.example.notes", tools, { createRecord: { execute } })).toThrowError(
      expect.objectContaining({ code: "HANDLER_MISSING", data: { tool: searchRecords.fullName } }),
    );
    const inherited = Object.create({ createRecord: { execute }, searchRecords: { execute } }) as object;
    expect(() => defineProvider("com.example.notes", tools, inherited)).toThrowError(expect.objectContaining({ code: "HANDLER_MISSING" }));
    expect(() => defineProvider("com.example.notes", tools, { createRecord: { execute }, searchRecords: { execute: "nope" } })).toThrowError(
      expect.objectContaining({ code: "HANDLER_MISSING" }),
    );
    expect(() => defineProvider("com.example.notes", tools, { createRecord: { execute, preview: 1 }, searchRecords: { execute } })).toThrowError(
      expect.objectContaining({ code: "HANDLER_MISSING", message: expect.stringContaining('"preview"') }),
    );
  });
});
