import type { ToolDeclaration } from "@toolpact/contract";
import type { ToolAnnotations } from "@modelcontextprotocol/client";

/** read, write or external. */
type Effect = ToolDeclaration["effect"];

/** What the import concludes from a tool's MCP annotations, and what it asks the reviewer to check. */
export interface InferredBehaviour {
  readonly effect: Effect;
  /** One line each, for `//` comments above the tool: what was inferred from what, and what to check. */
  readonly notes: readonly string[];
}

/**
 * The effect, conservatively: `read` only when the server says `readOnlyHint: true`; `external` when it
 * says `openWorldHint: true` (and not read-only); otherwise `write`. `destructiveHint` and
 * `idempotentHint` are noted, never acted on: `"recovery": "idempotent"` is the reviewer's call, since
 * it lets recovery re-send a call that may already have run.
 */
export function inferBehaviour(annotations: ToolAnnotations | undefined): InferredBehaviour {
  const hints = annotations ?? {};
  const notes: string[] = [];
  let effect: Effect;
  if (hints.readOnlyHint === true) {
    effect = "read";
    notes.push('effect "read": the server says readOnlyHint: true; check that it changes nothing (a read runs without confirmation), else set "write"');
    if (hints.openWorldHint !== false) {
      notes.push(
        hints.openWorldHint === true
          ? "it also says openWorldHint: true: it reads from outside (the web, another service); what it returns is not checked by anyone"
          : "the server gives no openWorldHint (MCP then assumes it may reach outside)",
      );
    }
  } else if (hints.openWorldHint === true) {
    effect = "external";
    notes.push(
      `effect "external": the server says openWorldHint: true${hints.readOnlyHint === false ? " and readOnlyHint: false" : " and gives no readOnlyHint"}; ` +
        "it reaches outside this instance, and is confirmed before each call",
    );
  } else {
    effect = "write";
    notes.push(
      hints.readOnlyHint === false
        ? 'effect "write": the server says readOnlyHint: false; it is confirmed before each call'
        : 'effect "write": the server gives no readOnlyHint; if this tool only reads, set "read"',
    );
    if (hints.openWorldHint === undefined) notes.push('the server gives no openWorldHint: if it reaches outside this instance (mail, the web), set "external"');
  }
  if (effect !== "read") {
    if (hints.destructiveHint === true) notes.push("destructiveHint: true: it may delete or overwrite data; keep it confirmed");
    else if (hints.destructiveHint === false) notes.push("destructiveHint: false: the server says it only adds; confirmation stays on all the same");
  }
  if (hints.idempotentHint === true) {
    notes.push(
      'idempotentHint: true: if the same call twice has the effect of one, add "recovery": "idempotent" so that recovery may re-send a call lost mid-flight; ' +
        "without it such a call ends OUTCOME_UNKNOWN",
    );
  }
  return { effect, notes };
}
