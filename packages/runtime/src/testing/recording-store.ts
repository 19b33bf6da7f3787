/**
 * A store wrapper that writes down every call, in order, with what differs between runs masked: tests
 * snapshot the list to pin which store calls a runtime path makes, with which arguments, and what came back.
 */
import type { Store } from "../store/store.js";

/** One store call as a line: `method(args...) -> result`, or `-> throws CODE`. */
export type StoreCallLine = string;

/** A store that records, and the lines it recorded. */
export interface RecordingStore {
  /** Wraps `store`; every runtime made on the wrapper is recorded into the same list. */
  wrap(store: Store): Store;
  /** The calls since the last `clear`, in the order they were made; results appear once they arrived. */
  lines(): readonly StoreCallLine[];
  /** Forgets what was recorded (setup done; the scenario starts). */
  clear(): void;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const JWT = /^ey[A-Za-z0-9_-]+\.ey[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const DIGEST = /^[A-Za-z0-9_-]{43}$/;
const KEY_ID = /^[0-9a-f]{20}$/;
/** Unix ms after 2001: a time, which differs between runs. */
const TIME_FLOOR = 1e12;

/**
 * Makes a masker for one scenario: ids become `<id N>` numbered by first sight (so the same id shows as
 * the same name), times `<time>`, durations `<duration>`, tokens `<token>`, digests `<digest>`, bytes
 * `<bytes>`; object keys come out sorted.
 */
export function createMasker(): (value: unknown) => unknown {
  const ids = new Map<string, string>();
  const mask = (value: unknown, key?: string): unknown => {
    if (value instanceof Uint8Array) return "<bytes>";
    if (key === "durationMs" && typeof value === "number") return "<duration>";
    if (key === "retryAfterMs" && typeof value === "number") return "<ms>";
    if (typeof value === "number") return value >= TIME_FLOOR ? "<time>" : value;
    if (typeof value === "string") {
      if (UUID.test(value)) {
        let name = ids.get(value);
        if (name === undefined) {
          name = `<id ${ids.size + 1}>`;
          ids.set(value, name);
        }
        return name;
      }
      if (JWT.test(value)) return "<token>";
      if (DIGEST.test(value)) return "<digest>";
      if (KEY_ID.test(value)) return "<key id>";
      return value.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => mask(id) as string);
    }
    if (Array.isArray(value)) return value.map((item) => mask(item));
    if (typeof value === "object" && value !== null) {
      // Keys in sorted order: a snapshot pins what is stored, not the order a record was built in.
      const out: Record<string, unknown> = {};
      for (const name of Object.keys(value).sort()) {
        const item = (value as Record<string, unknown>)[name];
        if (item !== undefined) out[name] = mask(item, name);
      }
      return out;
    }
    return value;
  };
  return (value) => mask(value);
}

/** A recording store: `wrap` the stores a fixture makes, `clear` after setup, snapshot `lines()`. */
export function createRecordingStore(): RecordingStore {
  let entries: { call: string; result: string | undefined }[] = [];
  let mask = createMasker();
  const show = (value: unknown) => (value === undefined ? "undefined" : JSON.stringify(mask(value)));
  return {
    wrap(store) {
      return new Proxy(store, {
        get(target, property, receiver) {
          const member: unknown = Reflect.get(target, property, receiver);
          if (typeof member !== "function" || typeof property !== "string") return member;
          return (...args: unknown[]) => {
            const entry = { call: `${property}(${args.map(show).join(", ")})`, result: undefined as string | undefined };
            entries.push(entry);
            const settle = (outcome: string) => {
              entry.result = outcome;
            };
            const failed = (error: unknown) => {
              settle(`throws ${String((error as { code?: unknown }).code ?? (error as Error)?.name ?? "error")}`);
              throw error;
            };
            try {
              const answer: unknown = (member as (...a: unknown[]) => unknown).apply(target, args);
              if (answer instanceof Promise) {
                return answer.then((value: unknown) => {
                  settle(show(value));
                  return value;
                }, failed);
              }
              settle(show(answer));
              return answer;
            } catch (error) {
              return failed(error);
            }
          };
        },
      });
    },
    lines: () => entries.map((entry) => `${entry.call} -> ${entry.result ?? "(pending)"}`),
    clear() {
      entries = [];
      mask = createMasker();
    },
  };
}
