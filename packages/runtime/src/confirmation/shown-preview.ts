/**
 * What a confirmation shows, whole: the provider's summary and details and the exact validated input.
 * Nothing is ever cut: a preview too large to show whole is refused at preview, before anything is kept
 * pending or a token is minted. The limits are on the JSON text the page renders.
 */
import { ToolpactError, canonicalJson } from "@toolpact/contract";

/** The longest summary a preview may give, in characters (for every preview: a summary is shown whole or refused). */
export const SHOWN_SUMMARY_MAX_CHARS = 2_000;
/** The longest details a preview that needs confirmation may give, as JSON text. */
export const SHOWN_DETAILS_MAX_CHARS = 100_000;
/** The largest input a call that needs confirmation may have, as canonical JSON text (the page shows it whole). */
export const SHOWN_INPUT_MAX_CHARS = 100_000;

/**
 * Refuses a confirmation that could not be shown whole: details from the provider past the limit are the
 * provider's failure (PROVIDER_FAILED, PreviewTooLarge); an input past it is the caller's (INPUT_INVALID).
 */
export function checkShownWhole(tool: string, shown: { readonly details: unknown; readonly input: unknown }): void {
  const details = shown.details === null || shown.details === undefined ? 0 : JSON.stringify(shown.details).length;
  if (details > SHOWN_DETAILS_MAX_CHARS) {
    throw new ToolpactError(
      "PROVIDER_FAILED",
      `the provider's preview of ${tool} has details of ${details} characters as JSON, more than the ${SHOWN_DETAILS_MAX_CHARS} ` +
        "a confirmation shows whole; nothing was asked: the provider must summarize large details",
      { tool, errorClass: "PreviewTooLarge" },
    );
  }
  const input = canonicalJson(shown.input).length;
  if (input > SHOWN_INPUT_MAX_CHARS) {
    const message = `the input is ${input} characters as JSON, more than the ${SHOWN_INPUT_MAX_CHARS} a confirmation shows whole`;
    throw new ToolpactError("INPUT_INVALID", `${tool} needs confirmation, and ${message}; nothing was asked: send a smaller input`, {
      tool,
      issues: [{ path: "", message }],
    });
  }
}
