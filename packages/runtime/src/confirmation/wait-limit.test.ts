/** `waitConfirmation`'s round limit: injectable (`maxConfirmationWaitMs`) and the same bounds in process as over HTTP. */
import { afterEach, describe, expect, it } from "vitest";
import { MAX_CONFIRMATION_WAIT_MS } from "@toolpact/contract";
import { NOTES, UNTRUSTED, createFixture, rejection, type RuntimeFixture } from "../testing/fixtures.js";

const create = { providerId: NOTES, tool: "create-record", version: 1 };
let fx: RuntimeFixture | undefined;
afterEach(async () => {
  await fx?.dispose();
  fx = undefined;
});

async function pending(maxConfirmationWaitMs?: number) {
  fx = await createFixture({
    runtime: { publicUrl: "https://toolpact.example.test", recoveryIntervalMs: 0, ...(maxConfirmationWaitMs === undefined ? {} : { maxConfirmationWaitMs }) },
  });
  const caller = await fx.principal(UNTRUSTED);
  const preview = await fx.runtime.preview(caller, create, { title: "waiting" });
  if (!preview.confirmation.required || preview.confirmation.mode !== "platform") throw new Error("expected platform mode");
  return { runtime: fx.runtime, caller, requestId: preview.confirmation.requestId };
}

describe("waitConfirmation's round limit", () => {
  it("holds a round no longer than maxConfirmationWaitMs, whatever timeoutMs asks", async () => {
    const { runtime, caller, requestId } = await pending(300);
    const started = performance.now();
    expect((await runtime.waitConfirmation(caller, requestId, { timeoutMs: MAX_CONFIRMATION_WAIT_MS })).status).toBe("pending");
    const took = performance.now() - started;
    expect(took).toBeGreaterThan(250);
    expect(took).toBeLessThan(3_000);
  });

  it("refuses in process what HTTP refuses: a timeoutMs over 25000 or not whole", async () => {
    const { runtime, caller, requestId } = await pending(300);
    for (const timeoutMs of [MAX_CONFIRMATION_WAIT_MS + 1, 1.5, -1, Number.NaN]) {
      const error = await rejection(runtime.waitConfirmation(caller, requestId, { timeoutMs }));
      expect(error.code).toBe("INPUT_INVALID");
      expect(error.message).toContain(`from 0 to ${MAX_CONFIRMATION_WAIT_MS}`);
    }
  });

  it("refuses a limit outside 1 to 25000 ms at start-up", async () => {
    await expect(createFixture({ runtime: { maxConfirmationWaitMs: MAX_CONFIRMATION_WAIT_MS + 1 } })).rejects.toThrow(
      /maxConfirmationWaitMs must be an integer from 1 to 25000; got 25001/,
    );
    await expect(createFixture({ runtime: { maxConfirmationWaitMs: 0 } })).rejects.toThrow(/maxConfirmationWaitMs/);
  });
});
