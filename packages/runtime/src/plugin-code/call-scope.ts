import type { ActorInfo } from "@toolpact/contract";

/**
 * Who a provider, gate, hook or guard invocation acts for: what a plugin's caller methods inherit inside
 * it. Each invocation gets its own; `active` turns false once that invocation settled or timed out, so code
 * it left running (a timer, a background loop) acts for nobody.
 */
export interface CallScope {
  readonly tenantId: string;
  readonly actor: ActorInfo;
  readonly correlationId: string | undefined;
  readonly active: boolean;
}

/** What a call decides once about its scopes; each invocation makes its own live CallScope from it. */
export type ScopeOwner = Omit<CallScope, "active">;

/** A call's AbortSignal, made only when plugin code reads `ctx.signal` (most never do). */
export class CallAbort {
  #controller: AbortController | undefined;
  #reason: unknown;
  #aborted = false;

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
