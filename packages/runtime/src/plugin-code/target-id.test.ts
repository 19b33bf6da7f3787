/**
 * A provider's `targetId` is checked where its answer is read: one the activity log cannot keep (a NUL,
 * which PostgreSQL's text refuses, another control character, a lone surrogate, or more than 256
 * characters) is the provider's fault, settled after its effect as OUTPUT_INVALID with the operation's
 * id, never OUTCOME_UNKNOWN. The same on SQLite and on PostgreSQL, for a read (recorded once, after its
 * effect) and for a write (begun, then settled).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Manifest } from "@toolpact/contract";
import type { Principal } from "../api.js";
import { createPostgresStore } from "../store/postgres/postgres-store.js";
import { createFixture, rejection, TENANT, tool, type FixtureOptions, type RuntimeFixture } from "../testing/fixtures.js";
import { postgresTestGate } from "../testing/index.js";
import { usePostgresHarness } from "../testing/postgres-harness.js";
import { tenantEvents } from "../testing/seam-plugins.js";

const TARGETS = "com.example.targets";
const find = { providerId: TARGETS, tool: "find" };
const make = { providerId: TARGETS, tool: "make" };

const manifest: Manifest = {
  id: TARGETS,
  version: "1.0.0",
  permissions: ["tools:provide"],
  tools: [tool({ name: "find", effect: "read" }), tool({ name: "make", effect: "write", requiresConfirmation: false })],
  gates: [],
  hooks: [],
  guards: [],
};

/** Bad targetIds, and the class each is recorded with (a lone surrogate is already no JSON string). */
const BAD: Record<string, readonly [targetId: string, errorClass: string]> = {
  NUL: ["rec\u00001", "InvalidTargetId"],
  "a line break": ["rec\n1", "InvalidTargetId"],
  "257 characters": ["r".repeat(257), "InvalidTargetId"],
  "a lone surrogate": ["rec\uD800", "NotJson"],
};

/** The same cases against each store. */
function describeTargetIds(name: string, options: () => FixtureOptions): void {
  describe(name, () => {
    let fx: RuntimeFixture;
    let alice: Principal;
    let answer: unknown;
    let executed: number;
    beforeEach(async () => {
      fx = await createFixture({ ...options(), runtime: { recoveryIntervalMs: 0 } });
      fx.runtime.registerPlugin(manifest);
      const provider = { execute: () => (executed++, answer) };
      fx.runtime.sdkFor(TARGETS).tools.provide("find", provider);
      fx.runtime.sdkFor(TARGETS).tools.provide("make", provider);
      await fx.runtime.admin.installPlugin(TENANT, TARGETS);
      alice = await fx.principal();
      executed = 0;
    });
    afterEach(() => fx.dispose());

    const eventOf = async (operationId: unknown) => (await tenantEvents(fx, "call")).find((event) => event.operationId === operationId);

    for (const ref of [find, make]) {
      for (const [what, [targetId, errorClass]] of Object.entries(BAD)) {
        it(`${ref.tool}: a targetId with ${what} is OUTPUT_INVALID after the effect, settled and recorded`, async () => {
          answer = { targetId };
          const error = await rejection(fx.runtime.execute(alice, ref, { title: "t" }));
          expect(executed).toBe(1);
          expect(error.code).toBe("OUTPUT_INVALID");
          expect(error.data).toEqual({ tool: `${TARGETS}:${ref.tool}@1`, operationId: expect.any(String), errorClass });
          const operationId = error.data.operationId as string;
          expect(await fx.runtime.getOperation(alice, operationId)).toMatchObject({ state: "succeeded", errorCode: "OUTPUT_INVALID" });
          const event = await eventOf(operationId);
          expect(event).toMatchObject({ outcome: "succeeded", errorCode: "OUTPUT_INVALID", errorClass });
          expect(event).not.toHaveProperty("targetId");
          // nothing is left for recovery: the operation settled
          fx.advance(60_000);
          expect(await fx.runtime.settleExpiredLeases()).toBe(0);
        });
      }

      it(`${ref.tool}: a targetId of 256 characters with a surrogate pair is kept whole`, async () => {
        const targetId = "😀" + "r".repeat(254);
        answer = { targetId };
        const result = await fx.runtime.execute(alice, ref, { title: "t" });
        expect(result.result).toEqual({ targetId });
        expect(await eventOf(result.operationId)).toMatchObject({ outcome: "succeeded", targetId });
      });
    }

    it("the caller's message says what is wrong and what to do", async () => {
      answer = { targetId: "rec\u00001" };
      expect((await rejection(fx.runtime.execute(alice, make, { title: "t" }))).message.replace(/[0-9a-f-]{36}/, "<id>")).toMatchInlineSnapshot(
        `"com.example.targets:make@1 ran (operation <id>) but its result names a targetId the activity log cannot keep (at most 256 characters, no control characters): the result is withheld; fix the provider"`,
      );
    });
  });
}

describeTargetIds("targetId on SQLite", () => ({}));

const gate = await postgresTestGate("PostgreSQL targetId tests");

describe.skipIf(gate.skip !== undefined)("PostgreSQL", () => {
  const { url, freshSchema } = usePostgresHarness(gate);
  describeTargetIds("targetId on PostgreSQL", () => {
    const schema = freshSchema();
    return { openStore: () => createPostgresStore({ url, schema }) };
  });
});
