/**
 * What the refusal tables pin: the error a refused call answers (code, message, data) and the activity
 * event it left, ids and times masked.
 */
import { TENANT, rejection, type RuntimeFixture } from "./fixtures.js";
import { createMasker } from "./recording-store.js";

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** A refused call as the tables snapshot it. */
export interface PinnedRefusal {
  readonly code: string;
  readonly message: string;
  readonly data: unknown;
  /** The newest call event of the tenant after the refusal (undefined when none was written). */
  readonly event: unknown;
}

/** The refusal of `call`, and the call event it left, masked. */
export async function pinRefusal(fx: RuntimeFixture, call: Promise<unknown>): Promise<PinnedRefusal> {
  const error = await rejection(call);
  const events = (await fx.runtime.admin.listActivity(TENANT, { limit: 20 })).events;
  const event = events.find((candidate) => candidate.kind === "call");
  const mask = createMasker();
  const masked = mask({ code: error.code, message: error.message, data: error.data, event: withoutTimes(event) }) as PinnedRefusal;
  return { ...masked, message: masked.message.replace(/retry in \d+ s/, "retry in <n> s") };
}

/** ISO times as `<time>` (the masker knows Unix ms only). */
function withoutTimes(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, typeof item === "string" && ISO_TIME.test(item) ? "<time>" : item]));
}
