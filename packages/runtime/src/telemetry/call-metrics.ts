/**
 * A call's metrics (`toolpact.calls`, `toolpact.call.duration`, `toolpact.refusals`), recorded when it
 * ends, with attribute objects made once per distinct set and shared by every call alike (no object built
 * per call on the hot path).
 */
import type { Attributes } from "@opentelemetry/api";
import type { CallFacts } from "../calls/call.js";
import { ATTR } from "./attributes.js";
import type { Instruments } from "./instruments.js";

/** One call's metrics: recorded at its end, with attribute objects shared by every call alike. */
export class CallMetrics {
  readonly #instruments: Instruments | undefined;
  readonly #sets: AttributeSets;
  readonly #phase: string;
  readonly #via: string;
  readonly #started = performance.now();

  constructor(instruments: Instruments | undefined, sets: AttributeSets, phase: string, via: string) {
    this.#instruments = instruments;
    this.#sets = sets;
    this.#phase = phase;
    this.#via = via;
  }

  /** Records the call's end: `outcome`, and `code` when it was refused or failed. */
  end(tool: CallFacts["tool"] | undefined, outcome: string, code: string | undefined): void {
    const instruments = this.#instruments;
    if (instruments === undefined) return;
    const toolName = tool === undefined ? undefined : `${tool.providerId}:${tool.declaration.name}`;
    const effect = tool?.declaration.effect;
    const attributes = this.#sets.get(this.#phase, this.#via, toolName, effect, ATTR.outcome, outcome);
    instruments.calls.add(1, attributes);
    instruments.callDuration.record((performance.now() - this.#started) / 1000, attributes);
    if (code !== undefined) instruments.refusals.add(1, this.#sets.get(this.#phase, this.#via, toolName, effect, ATTR.refusalCode, code));
  }
}

/**
 * A call metric's attributes, made once per distinct set and frozen: phase, via, the tool and its effect
 * once resolved, and the outcome or refusal code. Bounded as their values are: tools resolved (never a
 * caller's made-up name), codes and outcomes from fixed lists.
 */
export class AttributeSets {
  readonly #sets = new Map<string, Attributes>();

  /** The one attributes object for this set. */
  get(phase: string, via: string, toolName: string | undefined, effect: string | undefined, lastKey: string, last: string): Attributes {
    const key = `${phase}\u0000${via}\u0000${toolName ?? ""}\u0000${effect ?? ""}\u0000${lastKey}\u0000${last}`;
    const known = this.#sets.get(key);
    if (known !== undefined) return known;
    const attributes: Attributes = { [ATTR.phase]: phase, [ATTR.via]: via };
    if (toolName !== undefined) attributes[ATTR.toolName] = toolName;
    if (effect !== undefined) attributes[ATTR.effect] = effect;
    attributes[lastKey] = last;
    const frozen = Object.freeze(attributes);
    this.#sets.set(key, frozen);
    return frozen;
  }
}
