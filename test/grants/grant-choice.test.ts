/**
 * A grant chosen on the page is checked on the server against the bounds sealed with the request: never
 * wider than the policy allowed, limited only to text values the request's own input has.
 */
import { describe, expect, it } from "vitest";
import { isToolpactError } from "@toolpact/contract";
import { grantFromRequest } from "../../packages/runtime/src/grants/grant-from-request.js";
import type { ConfirmationRecord } from "../../packages/runtime/src/store/store.js";

const NOW = 1_800_000_000_000;
const record: ConfirmationRecord = {
  tenantId: "t1",
  requestId: "req-1",
  tool: "com.test.tickets:file-ticket@1",
  providerPluginId: "com.test.tickets",
  callerPluginId: "com.test.assistant",
  actorUserId: "user-1",
  digest: "d",
  digestKid: "k",
  schemaHash: "hash-1",
  effect: "write",
  mode: "platform",
  status: "pending",
  createdAt: NOW,
  expiresAt: NOW + 60_000,
};
const input = { project: "ops", count: 3, title: "disk full" };

function refusal(run: () => unknown): { code: string; paths: string[] } {
  try {
    run();
  } catch (error) {
    if (!isToolpactError(error)) throw error;
    const issues = (error.data as { issues?: { path: string }[] } | undefined)?.issues ?? [];
    return { code: error.code, paths: issues.map((issue) => issue.path) };
  }
  throw new Error("expected a refusal");
}

describe("a grant chosen on the confirmation page", () => {
  it("binds the request's caller, tool, version and schema hash, and limits to the input's own value", () => {
    const grant = grantFromRequest(record, input, { maxCalls: 10, maxSeconds: 3600 }, { maxCalls: 10, seconds: 600, limitTo: ["project"] }, NOW);
    expect(grant).toMatchObject({
      actorUserId: "user-1",
      callerPluginId: "com.test.assistant",
      tool: "com.test.tickets:file-ticket",
      version: 1,
      schemaHash: "hash-1",
      maxCalls: 10,
      uses: 0,
      expiresAt: NOW + 600_000,
      createdBy: "user-1",
    });
    expect(JSON.parse(grant.constraintsJson!)).toEqual({ properties: { project: { const: "ops" } } });
  });

  it("is refused when the policy allows no grant", () => {
    expect(refusal(() => grantFromRequest(record, input, undefined, { maxCalls: 1 }, NOW)).code).toBe("PERMISSION_DENIED");
  });

  it("is refused past the policy's bounds, and without a call count when the policy bounds calls", () => {
    expect(refusal(() => grantFromRequest(record, input, { maxCalls: 10, maxSeconds: 3600 }, { maxCalls: 11, seconds: 3601 }, NOW)).paths).toEqual([
      "/maxCalls",
      "/seconds",
    ]);
    expect(refusal(() => grantFromRequest(record, input, { maxCalls: 10 }, {}, NOW)).paths).toEqual(["/maxCalls"]);
    expect(refusal(() => grantFromRequest(record, input, { maxCalls: 10 }, { maxCalls: 0 }, NOW)).paths).toEqual(["/maxCalls"]);
    expect(refusal(() => grantFromRequest(record, input, { maxCalls: 10 }, { maxCalls: 2.5 }, NOW)).paths).toEqual(["/maxCalls"]);
  });

  it("limits only to text properties the input has: a number, a missing name or a prototype name is refused", () => {
    for (const name of ["count", "missing", "__proto__", "constructor"]) {
      expect(refusal(() => grantFromRequest(record, input, { maxCalls: 10 }, { maxCalls: 1, limitTo: [name] }, NOW)).paths).toEqual([`/limitTo/${name}`]);
    }
  });

  it("without a call bound in the policy, a time-only grant defaults to at most a day", () => {
    const grant = grantFromRequest(record, input, { maxSeconds: 30 * 24 * 3600 }, {}, NOW);
    expect(grant.maxCalls).toBeUndefined();
    expect(grant.expiresAt).toBe(NOW + 24 * 3600 * 1000);
  });
});
