import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { TOOLPACT_ERRORS, TOOLPACT_ERROR_CODES, ToolpactError, isToolpactError, isToolpactErrorCode } from "./errors.js";

/**
 * DESIGN.md's code table, in its order, with REQUEST_NOT_SENT (the client's own: a request that never left it)
 * and the codes added since so that each says what happened: HANDLER_INVALID (a handler that cannot run, not
 * an undeclared one), SHUTTING_DOWN, CONCURRENT_CHANGE and STORED_DATA_DAMAGED (none of them a database outage).
 */
const DESIGN_CODES = [
  "UNAUTHENTICATED",
  "PROVIDER_NOT_FOUND",
  "TOOL_NOT_FOUND",
  "VERSION_UNSUPPORTED",
  "PROVIDER_DISABLED",
  "CALLER_DISABLED",
  "HANDLER_MISSING",
  "PERMISSION_DENIED",
  "VERIFICATION_REQUIRED",
  "GATE_BLOCKED",
  "RUN_DENIED",
  "INPUT_INVALID",
  "OUTPUT_INVALID",
  "CONFIRMATION_REQUIRED",
  "CONFIRMATION_INVALID",
  "CONFIRMATION_EXPIRED",
  "CONFIRMATION_MISMATCH",
  "CONFIRMATION_USED",
  "CONFIRMATION_DENIED",
  "CAPABILITY_UNDECLARED",
  "HANDLER_INVALID",
  "GUARD_REJECTED",
  "IDEMPOTENCY_CONFLICT",
  "OPERATION_IN_PROGRESS",
  "PROVIDER_FAILED",
  "OUTCOME_UNKNOWN",
  "REQUEST_NOT_SENT",
  "RATE_LIMITED",
  "STORE_UNAVAILABLE",
  "SHUTTING_DOWN",
  "CONCURRENT_CHANGE",
  "STORED_DATA_DAMAGED",
  "MANIFEST_INVALID",
];

/** tRPC v11's error code names (TRPC_ERROR_CODES_BY_KEY). */
const TRPC_CODES = new Set([
  "PARSE_ERROR",
  "BAD_REQUEST",
  "INTERNAL_SERVER_ERROR",
  "NOT_IMPLEMENTED",
  "BAD_GATEWAY",
  "SERVICE_UNAVAILABLE",
  "GATEWAY_TIMEOUT",
  "UNAUTHORIZED",
  "PAYMENT_REQUIRED",
  "FORBIDDEN",
  "NOT_FOUND",
  "METHOD_NOT_SUPPORTED",
  "TIMEOUT",
  "CONFLICT",
  "PRECONDITION_FAILED",
  "PAYLOAD_TOO_LARGE",
  "UNSUPPORTED_MEDIA_TYPE",
  "UNPROCESSABLE_CONTENT",
  "PRECONDITION_REQUIRED",
  "TOO_MANY_REQUESTS",
  "CLIENT_CLOSED_REQUEST",
]);

describe("the error code table", () => {
  it("has exactly DESIGN.md's codes", () => {
    expect([...TOOLPACT_ERROR_CODES]).toEqual(DESIGN_CODES);
  });

  it("maps every code to a tRPC code", () => {
    for (const code of TOOLPACT_ERROR_CODES) expect(TRPC_CODES.has(TOOLPACT_ERRORS[code]), code).toBe(true);
  });

  it("gives every code one line of JSDoc saying when it happens", () => {
    const source = readFileSync(new URL("./errors.ts", import.meta.url), "utf8");
    const table = source.slice(source.indexOf("export const TOOLPACT_ERRORS"), source.indexOf("} as const;"));
    const lines = table.split("\n").map((line) => line.trim());
    for (const code of TOOLPACT_ERROR_CODES) {
      const index = lines.findIndex((line) => line.startsWith(`${code}:`));
      expect(index, code).toBeGreaterThan(0);
      expect(lines[index - 1], code).toMatch(/^\/\*\* \S.{10,} \*\/$/);
    }
  });
});

describe("ToolpactError", () => {
  it("carries code, data, tRPC code and cause", () => {
    const cause = new Error("root");
    const error = new ToolpactError("INPUT_INVALID", "bad input", { issues: [{ path: "/a", message: "must be string" }] }, { cause });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("ToolpactError");
    expect(error.code).toBe("INPUT_INVALID");
    expect(error.trpcCode).toBe("BAD_REQUEST");
    expect(error.data.issues).toEqual([{ path: "/a", message: "must be string" }]);
    expect(error.cause).toBe(cause);
    expect(new ToolpactError("RATE_LIMITED", "slow down").data).toEqual({});
  });

  it("is recognised only as a real instance: an Error that borrows the name and a code is not one", () => {
    expect(isToolpactError(new ToolpactError("GATE_BLOCKED", "x"))).toBe(true);
    const forged = Object.assign(new Error("db at postgres://svc:hunter2@10.0.0.5 refused"), {
      name: "ToolpactError",
      code: "OUTCOME_UNKNOWN",
      data: { operationId: "forged" },
    });
    expect(isToolpactError(forged)).toBe(false);
    expect(isToolpactError(Object.assign(new Error("x"), { name: "ToolpactError", code: "NOPE" }))).toBe(false);
    expect(isToolpactError({ name: "ToolpactError", code: "GATE_BLOCKED" })).toBe(false);
    expect(isToolpactError(new Error("x"))).toBe(false);
  });

  it("checks codes", () => {
    expect(isToolpactErrorCode("OUTCOME_UNKNOWN")).toBe(true);
    expect(isToolpactErrorCode("toString")).toBe(false);
    expect(isToolpactErrorCode(42)).toBe(false);
  });

  it("prints short: its stack names the code, the message, what to do and the ids, then a few frames", () => {
    const cause = Object.assign(new Error("wire"), { meta: { response: "a long answer" } });
    const error = new ToolpactError("OUTCOME_UNKNOWN", "the provider timed out", { operationId: "op-1", tool: "com.example.notes:create-record@1" }, { cause });
    const lines = error.stack!.split("\n");
    expect(lines.slice(0, 4)).toEqual([
      "ToolpactError [OUTCOME_UNKNOWN]: the provider timed out",
      "    what to do: look the operation up (tools.operation), or retry with the same idempotencyKey; do not retry blindly",
      "    tool: com.example.notes:create-record@1",
      "    operation: op-1",
    ]);
    expect(lines.slice(4).length).toBeGreaterThan(0);
    expect(lines.slice(4).length).toBeLessThanOrEqual(3);
    expect(lines.slice(4).every((line) => /^\s+at /.test(line))).toBe(true);
    expect(error.whatToDo).toBe(lines[1]!.slice("    what to do: ".length));
    expect(error.cause).toBe(cause);
    // A stack set by someone else (a test runner, a logger) is kept as given.
    error.stack = "replaced";
    expect(error.stack).toBe("replaced");
  });
});
