/**
 * The call's facts are typed as they grow: a step reads only facts an earlier step set, and a fact is set
 * once. Checked by tsc (tsconfig.test.json, part of `pnpm build` and so of `pnpm test`): each
 * `@ts-expect-error` fails the build when its error goes away, and each control case when it stops compiling.
 */
import type { PreviewResult } from "@toolpact/contract";
import type { CallAt } from "./call.js";
import { chain, type LastStep, type Step } from "./chain.js";
import { applyGates } from "./steps/apply-gates.js";
import { checkCaller } from "./steps/check-caller.js";
import { decidePermission } from "./steps/decide-permission.js";
import { providerAuthorize } from "./steps/provider-authorize.js";
import { resolveTool } from "./steps/resolve-tool.js";
import { validateInput } from "./steps/validate-input.js";
import { verifyConfirmation } from "./steps/verify-confirmation.js";

// A step reads what its type names, and nothing else.
export const readsTool: Step<"tool"> = (call, next) => {
  void call.tool.fullName; // control: the fact it names
  // @ts-expect-error the permission is decide-permission's fact, and this step does not name it
  void call.permission.confirm;
  return next(call);
};

// A step that names a fact it adds must set it before handing on.
export const forgetsToSet: Step<"tool", "input"> = (call, next) =>
  // @ts-expect-error validate-input's fact "input" is not set on the call handed on
  next(call);

// In a chain, a step may follow only the steps that set what it reads. Control: the real order compiles.
export const inOrder = chain<PreviewResult>()
  .step(resolveTool)
  .step(checkCaller)
  .step(validateInput)
  .step(decidePermission)
  .step(providerAuthorize)
  .step(applyGates)
  .step(verifyConfirmation);

// decide-permission reads the tool, which resolve-tool sets: first, it does not compile.
// @ts-expect-error decide-permission before resolve-tool
export const permissionFirst = chain<PreviewResult>().step(decidePermission);

// verify-confirmation reads apply-gates' decision: before the gates ran, it does not compile.
// @ts-expect-error verify-confirmation before apply-gates
export const unconfirmedDecision = chain<PreviewResult>().step(resolveTool).step(validateInput).step(decidePermission).step(verifyConfirmation);

// The last step is held to the same rule.
const summary: LastStep<PreviewResult, "tool" | "decision"> = async (call) =>
  ({
    summary: call.tool.fullName,
    details: null,
    confirmation: { required: call.decision.confirm },
  }) as PreviewResult;
export const summarized = chain<PreviewResult>().step(resolveTool).step(validateInput).step(decidePermission).step(applyGates).last(summary);
// @ts-expect-error the summary reads the decision, which no step before it set
export const summarizedEarly = chain<PreviewResult>().step(resolveTool).last(summary);

// Each fact is set once: a step cannot set the permission of a call that already has one.
export function setTwice(call: CallAt<"permission">): void {
  // @ts-expect-error the permission is already set; a gate narrows it into the decision instead
  call.permitted(call.permission);
  // control: the decision is not set yet
  call.decided(call.permission);
}
