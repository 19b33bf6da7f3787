import { ToolpactError } from "@toolpact/contract";
import { failureClassOf, gateDecisionOf } from "../../plugin-code/answers.js";
import { gateRank, type GateCall, type GateDecision } from "../../seams.js";
import type { CallAt, CallDecision } from "../call.js";
import type { Next, Step } from "../chain.js";

type Reads = "tool" | "input" | "seams" | "permission";

/**
 * apply-gates: every gate acting on the call, in declared order; the most restrictive answer wins
 * (block > requireConfirmation > result > allow). Gates only narrow what the steps before allowed, into
 * the call's decision: a new value, the permission left as policy decided it. A gate that throws, times
 * out, answers nonsense or has no function blocks (fail closed).
 */
export const applyGates: Step<Reads, "decision"> = function applyGates(call, next) {
  // No gate: the decision is the permission itself (nothing allocated).
  return call.seams.gates.length === 0 ? next(call.decided(call.permission)) : gatesThen(call, next);
};

async function gatesThen<T>(call: CallAt<Reads>, next: Next<CallAt<Reads | "decision">, T>): Promise<T> {
  const { principal, tool } = call;
  const gateCall: GateCall = Object.freeze({
    tenantId: principal.tenantId,
    tool: tool.fullName,
    providerId: tool.providerId,
    name: tool.declaration.name,
    version: tool.declaration.version,
    effect: tool.declaration.effect,
    input: call.input,
    phase: call.phase,
    callerPluginId: principal.callerPluginId,
    actor: principal.actor,
    ...(call.runId === undefined ? {} : { runId: call.runId }),
  });
  const about = { principal, tool: tool.fullName, phase: call.phase, operationId: undefined };
  let winner: { decision: GateDecision; seam: string } | undefined;
  for (const gate of call.seams.gates) {
    const handler = gate.handler;
    let decision: GateDecision | undefined;
    let failure: string | undefined;
    if (handler === undefined) {
      failure = "HandlerMissing";
    } else {
      try {
        // Read (and a result value copied) inside the guarded block: a getter that throws is the gate failing.
        decision = gateDecisionOf(await call.parts.pluginCode.runSeam(gate, about, (ctx) => handler(gateCall, ctx)));
      } catch (error) {
        failure = failureClassOf(error);
      }
    }
    if (decision === undefined || decision.decision === "block") {
      call.trace.decidedBy(gate.key);
      const why =
        failure === "HandlerMissing"
          ? "the gate is activated but its plugin provided no function for it (fail closed)"
          : failure === "TimeoutError"
            ? `the gate did not answer within ${gate.timeoutMs} ms (fail closed)`
            : failure !== undefined
              ? "the gate failed (fail closed); its message is not forwarded"
              : decision === undefined
                ? "the gate gave no valid decision (fail closed)"
                : decision.reason;
      throw new ToolpactError("GATE_BLOCKED", `${tool.fullName} was blocked by gate ${gate.key}: ${why}`, {
        tool: tool.fullName,
        ...(failure !== undefined ? { errorClass: failure } : decision === undefined ? { errorClass: "InvalidGateDecision" } : {}),
      });
    }
    if (winner === undefined || gateRank(decision.decision) > gateRank(winner.decision.decision)) {
      winner = { decision, seam: gate.key };
    }
  }
  let decision: CallDecision = call.permission;
  if (winner?.decision.decision === "requireConfirmation") {
    // A gate adds a confirmation (in the mode policy decided); it never removes one.
    call.trace.decidedBy(winner.seam);
    decision = { ...decision, confirm: true, confirmGate: winner.seam };
  } else if (winner?.decision.decision === "result") {
    decision = { ...decision, answer: { value: winner.decision.value, seam: winner.seam } };
  }
  return next(call.decided(decision));
}
