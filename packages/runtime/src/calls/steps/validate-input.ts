import { ToolpactError, prepareInput } from "@toolpact/contract";
import type { Step } from "../chain.js";

/** validate-input: the input, copied and frozen within the input limits, matches the tool's inputSchema. */
export const validateInput: Step<"tool", "input"> = function validateInput(call, next) {
  const { tool } = call;
  const input = prepareInput(call.rawInput, call.parts.context.inputLimits);
  const issues = tool.validateInput(input);
  if (issues.length > 0) {
    const first = issues[0]!;
    throw new ToolpactError(
      "INPUT_INVALID",
      `the input of ${tool.fullName} does not match its inputSchema at ${first.path || "/"}: ${first.message}` +
        (issues.length > 1 ? ` (and ${issues.length - 1} more)` : ""),
      { tool: tool.fullName, issues },
    );
  }
  return next(call.accepted(input));
};
