/**
 * What a provider's code may tell the runtime when it throws, beyond "it failed": its effect may have
 * happened, it is at capacity, or it refuses with a message meant for the caller. A provider that runs
 * its effect elsewhere (an upstream MCP server, a child process, a remote service) throws these; anything
 * else it throws is PROVIDER_FAILED with its class name only.
 *
 * Each is recognised by a brand (`Symbol.for`), not by module identity, so a provider built against its
 * own installed copy of `@toolpact/client` is understood by the host's runtime.
 */

/** The longest message a ProviderRefusal forwards to the caller. */
export const PROVIDER_REFUSAL_MAX_CHARS = 2000;

const BRAND: unique symbol = Symbol.for("toolpact.providerSignal") as never;

type SignalKind = "outcome-unknown" | "busy" | "refusal";

/**
 * True when `value` carries the brand of `kind`. A provider may throw anything (a Proxy whose every read
 * throws, a getter): reading the brand never lets what it throws escape.
 */
function isSignal(value: unknown, kind: SignalKind): boolean {
  if (typeof value !== "object" || value === null) return false;
  try {
    return (value as { [BRAND]?: unknown })[BRAND] === kind;
  } catch {
    return false;
  }
}

/**
 * A signal's message as the caller may see it (see `shownProviderMessage`), read so that nothing the
 * provider's object does on the read escapes: a message that is not a string, or whose read throws, is "".
 */
export function signalMessage(signal: Error): string {
  try {
    const message: unknown = signal.message;
    return typeof message === "string" ? shownProviderMessage(message) : "";
  } catch {
    return "";
  }
}

/**
 * The call may have reached the effect but its answer was lost (connection lost, process killed, no
 * answer in time): a write or external tool's operation becomes `unknown` (OUTCOME_UNKNOWN), never
 * "failed"; a read simply failed (it has no effect to recover).
 */
export class ProviderOutcomeUnknown extends Error {
  override readonly name: string = "ProviderOutcomeUnknown";
  readonly [BRAND] = "outcome-unknown";

  static override [Symbol.hasInstance](value: unknown): boolean {
    return isSignal(value, "outcome-unknown");
  }
}

/**
 * The provider is at capacity and sent nothing. From `authorize` or `preview` (before any operation
 * exists) the caller gets RATE_LIMITED with `retryAfterMs`; from `execute` the operation failed, with
 * nothing run.
 */
export class ProviderBusy extends Error {
  override readonly name: string = "ProviderBusy";
  readonly [BRAND] = "busy";
  readonly retryAfterMs: number;

  constructor(message: string, retryAfterMs: number) {
    super(message);
    this.retryAfterMs = retryAfterMs;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return isSignal(value, "busy");
  }
}

/**
 * The provider answered that the call failed, with a message for the caller (an upstream tool's own
 * error text). The operation failed (PROVIDER_FAILED); the caller's error carries the message with
 * control and formatting characters made visible, at most PROVIDER_REFUSAL_MAX_CHARS long. It is never
 * stored nor logged: an idempotent replay answers without it.
 */
export class ProviderRefusal extends Error {
  override readonly name: string = "ProviderRefusal";
  readonly [BRAND] = "refusal";

  static override [Symbol.hasInstance](value: unknown): boolean {
    return isSignal(value, "refusal");
  }
}

/** A provider's message as the caller sees it: hidden characters as `\u{...}`, cut to PROVIDER_REFUSAL_MAX_CHARS. */
export function shownProviderMessage(message: string): string {
  const visible = message.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu, (char) => `\\u{${char.codePointAt(0)!.toString(16)}}`);
  return visible.length <= PROVIDER_REFUSAL_MAX_CHARS ? visible : `${visible.slice(0, PROVIDER_REFUSAL_MAX_CHARS)}… (cut)`;
}

/** The longest wait a ProviderBusy may ask of a caller, ms. */
const MAX_RETRY_AFTER_MS = 60_000;

/** A ProviderBusy's `retryAfterMs`, read safely: a whole number of ms from 0 to 60 s, else 1 s. */
export function busyRetryAfterMs(busy: ProviderBusy): number {
  try {
    const wait: unknown = busy.retryAfterMs;
    return typeof wait === "number" && Number.isFinite(wait) ? Math.min(MAX_RETRY_AFTER_MS, Math.max(0, Math.ceil(wait))) : 1000;
  } catch {
    return 1000;
  }
}
