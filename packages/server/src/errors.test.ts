import { TRPCError } from "@trpc/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolpactError } from "@toolpact/contract";
import { INTERNAL_ERROR_MESSAGE, describeInternalError, toErrorShape, toPublicError } from "./errors.js";

describe("toPublicError", () => {
  it("keeps a ToolpactError's code, message and data, also when tRPC wrapped it", () => {
    const error = new ToolpactError("CONFIRMATION_USED", "token already used", { operationId: "op-1", tool: "a:b@1" });
    const expected = {
      trpcCode: "CONFLICT",
      message: "token already used",
      toolpactCode: "CONFIRMATION_USED",
      toolpactData: { operationId: "op-1", tool: "a:b@1" },
      internal: false,
    };
    expect(toPublicError(error)).toEqual(expected);
    expect(toPublicError(new TRPCError({ code: "INTERNAL_SERVER_ERROR", cause: error }))).toEqual(expected);
  });

  it("turns anything else into a generic internal error that carries nothing of the cause", () => {
    const canary = "canary-7f3a secret input";
    for (const thrown of [new Error(canary), new TRPCError({ code: "INTERNAL_SERVER_ERROR", cause: new TypeError(canary) }), canary, { message: canary }]) {
      const pub = toPublicError(thrown);
      expect(pub).toEqual({
        trpcCode: "INTERNAL_SERVER_ERROR",
        message: INTERNAL_ERROR_MESSAGE,
        toolpactCode: "OUTCOME_UNKNOWN",
        toolpactData: {},
        internal: true,
      });
      expect(JSON.stringify(toErrorShape(pub, "tools.execute"))).not.toContain("canary");
    }
  });

  it("does not take an Error that borrows ToolpactError's name and a code for one: it stays internal", () => {
    const forged = Object.assign(new Error("db at postgres://svc:hunter2@10.0.0.5/notes refused"), {
      name: "ToolpactError",
      code: "CONFIRMATION_USED",
      data: { operationId: "forged" },
    });
    for (const thrown of [forged, new TRPCError({ code: "INTERNAL_SERVER_ERROR", cause: forged })]) {
      const pub = toPublicError(thrown);
      expect(pub).toEqual({
        trpcCode: "INTERNAL_SERVER_ERROR",
        message: INTERNAL_ERROR_MESSAGE,
        toolpactCode: "OUTCOME_UNKNOWN",
        toolpactData: {},
        internal: true,
      });
      expect(JSON.stringify(toErrorShape(pub, "tools.execute"))).not.toMatch(/hunter2|forged|CONFIRMATION_USED/);
    }
  });

  it("reports a body that fails the procedure's schema as INPUT_INVALID with JSON Pointer issues", () => {
    const schema = z.strictObject({ ref: z.strictObject({ providerId: z.string() }), input: z.unknown() });
    const parsed = schema.safeParse({ ref: { providerId: 7 }, input: 1, actor: "someone-else" });
    expect(parsed.success).toBe(false);
    const pub = toPublicError(new TRPCError({ code: "BAD_REQUEST", cause: parsed.error }));
    expect(pub.trpcCode).toBe("BAD_REQUEST");
    expect(pub.toolpactCode).toBe("INPUT_INVALID");
    expect(pub.toolpactData?.issues?.map((issue) => issue.path).sort()).toEqual(["", "/ref/providerId"]);
    expect(pub.message).toContain('unknown key "actor"');
  });

  it("keeps tRPC's status for oversized, non-JSON and wrongly typed bodies but gives them a toolpact code", () => {
    expect(toPublicError(new TRPCError({ code: "PAYLOAD_TOO_LARGE" }))).toMatchObject({
      trpcCode: "PAYLOAD_TOO_LARGE",
      toolpactCode: "INPUT_INVALID",
    });
    expect(toPublicError(new TRPCError({ code: "PARSE_ERROR" }))).toMatchObject({ trpcCode: "PARSE_ERROR", toolpactCode: "INPUT_INVALID" });
    expect(toPublicError(new TRPCError({ code: "UNSUPPORTED_MEDIA_TYPE" }))).toMatchObject({
      trpcCode: "UNSUPPORTED_MEDIA_TYPE",
      toolpactCode: "INPUT_INVALID",
    });
  });

  it("keeps routing errors' tRPC code and gives them a toolpact code, with a near procedure's name", () => {
    const procedures = () => ["tools.preview", "tools.execute"];
    const pub = toPublicError(new TRPCError({ code: "NOT_FOUND", message: 'No procedure found on path "x"' }), { path: "tools.exectue", procedures });
    expect(pub).toMatchObject({ trpcCode: "NOT_FOUND", toolpactCode: "INPUT_INVALID", internal: false });
    expect(pub.message).toBe('no such procedure "tools.exectue" on this server; did you mean "tools.execute"?');
    expect(toPublicError(new TRPCError({ code: "METHOD_NOT_SUPPORTED" }))).toMatchObject({ trpcCode: "METHOD_NOT_SUPPORTED", toolpactCode: "INPUT_INVALID" });
  });
});

describe("toErrorShape", () => {
  it("puts toolpactCode and toolpactData into data, with the HTTP status of the code's tRPC code", () => {
    const pub = toPublicError(new ToolpactError("UNAUTHENTICATED", "actor token expired"));
    expect(toErrorShape(pub, "tools.list")).toEqual({
      message: "actor token expired",
      code: -32001,
      data: { code: "UNAUTHORIZED", httpStatus: 401, path: "tools.list", toolpactCode: "UNAUTHENTICATED", toolpactData: {} },
    });
    expect(toErrorShape(toPublicError(new TRPCError({ code: "PAYLOAD_TOO_LARGE" }))).data.httpStatus).toBe(413);
  });
});

describe("describeInternalError", () => {
  it("gives the class and stack frames, never the message", () => {
    const description = describeInternalError(new TRPCError({ code: "INTERNAL_SERVER_ERROR", cause: new RangeError("canary-1234") }));
    expect(description.errorClass).toBe("RangeError");
    expect(description.frames.length).toBeGreaterThan(0);
    expect(JSON.stringify(description)).not.toContain("canary");
  });
});
